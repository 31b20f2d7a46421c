// YAML request bodies, read as kube-apiserver reads them: sigs.k8s.io/yaml turns the first
// document into JSON (the last of repeated keys wins), and its strict reading (field validation
// Strict or Warn) reports every repeated key in one go-yaml error:
//
//   yaml: unmarshal errors:
//     line 7: key "a" already set in map
//
// The text is parsed once: the value and the repeated keys come from the same document, and
// nothing after the first document with content is parsed (go-yaml never reads past it either),
// since the parser's node model costs some 40 bytes of memory per byte of text.

import { Composer, type Document, isAlias, isMap, isScalar, isSeq, type Node, parse, Parser, type Tags } from 'yaml';
import { GO_PLAIN_SCALAR, UNSUPPORTED_JSON_VALUE } from './yaml-scalars.js';
import { goQuote } from '../machinery/go-quote.js';
import { jsonTooDeep, MAX_NESTING_DEPTH, valueTooDeep, yamlTooDeep } from '../limits/decode-limits.js';
import { errors } from '../machinery/status.js';

/** plain scalars resolve as go-yaml v2 resolves them (yaml-scalars.ts), `<<` merges as there:
 *  for request bodies and for the files kapi reads at start alike */
const GO_YAML_RULES = { merge: true, customTags: (tags: Tags) => [GO_PLAIN_SCALAR, ...tags] } as const;

/** aliases a YAML body may expand (bounds alias bombs) */
const MAX_YAML_ALIASES = 100;

/** sigs.k8s.io/yaml's words for YAML nested too deep (with our limit) */
export const YAML_TOO_DEEP = `yaml: exceeded max depth of ${MAX_NESTING_DEPTH}`;

export const YAML_ERRORS_PREFIX = 'yaml: unmarshal errors:\n';

export interface DecodedYaml {
  value: unknown;
  /** the text was JSON and JSON.parse read it: repeated keys are not known yet */
  json: boolean;
  /** a YAML text's repeated keys, as go-yaml's strict decoding error */
  duplicateKeys?: string;
}

/** Decodes the first document of a YAML text. Its depth is checked before the parser runs
 *  (the parser recurses per level) and again after aliases were expanded. */
export function decodeYamlText(text: string): DecodedYaml {
  const json = asJson(text);
  if (json.parsed) return { value: json.value, json: true };
  if (yamlTooDeep(text, MAX_NESTING_DEPTH)) throw errors.badRequest(`error converting YAML to JSON: ${YAML_TOO_DEEP}`);
  let value: unknown;
  let duplicateKeys: string | undefined;
  try {
    const doc = firstDocument(text);
    if (!doc) return { value: null, json: false };
    // a syntax error is the parser's, found before any value reaches the JSON encoder
    const syntaxError = doc.errors.find((e) => !e.message.startsWith(UNSUPPORTED_JSON_VALUE));
    if (syntaxError) throw new Error(`yaml: line ${new Lines(text).of(syntaxError.pos[0])}: ${syntaxError.message}`);
    if (doc.errors[0]) throw new Error(doc.errors[0].message);
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    duplicateKeys = repeatedKeys(doc, text);
  } catch (err) {
    throw errors.badRequest(`error converting YAML to JSON: ${(err as Error).message}`);
  }
  if (valueTooDeep(value)) throw errors.badRequest(`error converting YAML to JSON: ${YAML_TOO_DEEP}`);
  return { value, json: false, duplicateKeys };
}

export function decodeYaml(text: string): unknown {
  return decodeYamlText(text).value;
}

/** what the YAML thread (yaml-thread.ts) made of a request's body: its decoding, or the error
 *  that is the body's answer */
const decodedBodies = new WeakMap<Buffer, DecodedYaml | Error>();

export function rememberDecodedYaml(body: Buffer, outcome: DecodedYaml | Error): void {
  decodedBodies.set(body, outcome);
}

/** decodeYamlText of a request body, or what the YAML thread made of it already. What was kept
 *  is handed out once: the value is the caller's to change, as a decoding of its own is. */
export function decodeYamlBuffer(body: Buffer): DecodedYaml {
  const kept = decodedBodies.get(body);
  if (kept === undefined) return decodeYamlText(body.toString('utf8'));
  decodedBodies.delete(body);
  if (kept instanceof Error) throw kept;
  return kept;
}

/**
 * A YAML file kapi reads at start (a configuration, a kubeconfig) as kube reads such files,
 * through sigs.k8s.io/yaml: plain scalars by go-yaml v2's rules (`insecure-skip-tls-verify:
 * yes` is true), `<<` merges. Throws the parser's first error; `uniqueKeys` for the files kube
 * decodes strictly.
 */
export function parseConfigYaml(text: string, opts: { uniqueKeys?: boolean } = {}): unknown {
  return parse(text, { ...GO_YAML_RULES, uniqueKeys: opts.uniqueKeys ?? false, maxAliasCount: MAX_YAML_ALIASES });
}

/** go-yaml's strict decoding error for `text` read as YAML (even when it is JSON), or
 *  undefined; a text that does not decode has none (decoding reports it) */
export function yamlDuplicateKeysError(text: string): string | undefined {
  if (yamlTooDeep(text, MAX_NESTING_DEPTH)) return undefined;
  try {
    const doc = firstDocument(text);
    return doc && doc.errors.length === 0 ? repeatedKeys(doc, text) : undefined;
  } catch {
    return undefined;
  }
}

// prettyErrors would give every error the text around it: one scan of the text per error,
// and a hostile body makes an error per key (seconds of CPU for a few hundred KB)
const COMPOSE_OPTIONS = { ...GO_YAML_RULES, uniqueKeys: false, prettyErrors: false } as const;

/** The first document with content (else the first document), composed as soon as the parser
 *  has it: the documents after it are never parsed. */
function firstDocument(text: string): Document.Parsed | undefined {
  const composer = new Composer(COMPOSE_OPTIONS);
  let first: Document.Parsed | undefined;
  for (const token of new Parser().parse(text)) {
    // a document's end marker only closes a document, and each is closed below already
    if (token.type === 'doc-end') continue;
    for (const doc of composer.next(token)) first ??= doc;
    if (token.type !== 'document') continue;
    for (const doc of composer.end()) {
      if (doc.contents !== null) return doc;
      first ??= doc;
    }
  }
  for (const doc of composer.end(true, text.length)) first ??= doc;
  return first;
}

/** how Go's %#v prints a decoded YAML map key */
function goSyntax(key: unknown): string {
  if (typeof key === 'string') return goQuote(key);
  if (key === null || key === undefined) return '<nil>';
  return String(key);
}

function keyIdentity(key: unknown): string {
  return `${typeof key}:${String(key)}`;
}

/** every repeated key of a document, with the line of the repeated key's value */
function repeatedKeys(doc: Document.Parsed, text: string): string | undefined {
  const found: string[] = [];
  let lines: Lines | undefined;
  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_NESTING_DEPTH || node === null || node === undefined || isAlias(node)) return;
    if (isSeq(node)) {
      for (const item of node.items) visit(item, depth + 1);
      return;
    }
    if (!isMap(node)) return;
    const seen = new Set<string>();
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      const key = isScalar(keyNode) ? keyNode.value : keyNode === null ? null : String(keyNode);
      // merge keys (`<<: *base`) are not members
      if (key === '<<') continue;
      // go-yaml decodes the value before it stores (and checks) the key
      visit(pair.value, depth + 1);
      const id = keyIdentity(key);
      if (seen.has(id)) {
        const valueNode = pair.value as Node | null;
        const at = valueNode?.range ? valueNode.range[0] : keyNode?.range ? keyNode.range[1] : 0;
        lines ??= new Lines(text);
        found.push(`line ${lines.of(at)}: key ${goSyntax(key)} already set in map`);
      }
      seen.add(id);
    }
  };
  visit(doc.contents, 0);
  return found.length === 0 ? undefined : `${YAML_ERRORS_PREFIX}  ${found.join('\n  ')}`;
}

/** 1-based line numbers of text offsets */
class Lines {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }
  of(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}

/**
 * YAML bodies are most often JSON (kubectl sends server-side apply patches that way), and JSON
 * is YAML: JSON.parse reads them many times faster than the YAML parser, with the same result.
 */
function asJson(text: string): { parsed: true; value: unknown } | { parsed: false } {
  const start = text.search(/\S/);
  if (start < 0 || (text[start] !== '{' && text[start] !== '[')) return { parsed: false };
  const bytes = Buffer.from(text, 'utf8');
  if (jsonTooDeep(bytes)) return { parsed: false };
  try {
    return { parsed: true, value: JSON.parse(text) };
  } catch {
    return { parsed: false };
  }
}
