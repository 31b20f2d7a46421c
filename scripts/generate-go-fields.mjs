#!/usr/bin/env node
// Generates server/apis/generated/go-fields.json: how each JSON field of a built-in type
// shows up when kube-apiserver turns a Go object into the unstructured form server-side apply
// works on (structured-merge-diff reads Go structs through their json tags). Field management
// needs it to see objects as kube-apiserver does: the empty object a create is compared with
// (`spec.template` is there, `spec.selector` is null, `data` is absent), and values Go drops
// (`paused: false` with omitempty).
//
// Inputs: server/apis/generated/schemas.json (definitions and JSON fields) and the Go type
// declarations of the same release (k8s.io/api, k8s.io/apimachinery,
// k8s.io/apiextensions-apiserver, k8s.io/kube-aggregator at --tag, from git mirrors).
//
// Output: { "<definition>": { "<json field>": code } } with one code per field:
//   "o"  omitempty, not a pointer (string, number, bool, slice, map): zero or empty is left out
//   "N"  no omitempty, pointer/slice/map/interface: absent is null
//   "z"  no omitempty, scalar: absent is the zero value
//   "s"  a struct held by value: always there (its own zero value when unset)
// Fields not listed are omitempty pointers (or interfaces): left out when nil, kept otherwise.
//
// Usage: node scripts/generate-go-fields.mjs [--tag TAG]

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, goImports, goSource, option, repoRoot } from './lib/go-source.mjs';

const tag = option('tag', 'v0.33.9');
const roots = [
  ['io.k8s.api.', 'k8s.io/api/', goSource('kubernetes+api')],
  ['io.k8s.apimachinery.', 'k8s.io/apimachinery/', goSource('kubernetes+apimachinery')],
  ['io.k8s.apiextensions-apiserver.', 'k8s.io/apiextensions-apiserver/', goSource('kubernetes+apiextensions-apiserver')],
  ['io.k8s.kube-aggregator.', 'k8s.io/kube-aggregator/', goSource('kubernetes+kube-aggregator')],
];
const schemasFile = path.join(repoRoot, 'server/apis/generated/schemas.json');
const outFile = path.join(repoRoot, 'server/apis/generated/go-fields.json');

/** [git dir, package directory] of a Go import path */
function sourceOf(importPath) {
  for (const [, prefix, dir] of roots) if (importPath.startsWith(prefix)) return [dir, importPath.slice(prefix.length)];
  return undefined;
}

const SCALARS = new Set([
  'string',
  'bool',
  'int',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'float32',
  'float64',
  'byte',
  'rune',
]);

/** per package: struct name -> fields; named type -> underlying type expression */
const packages = new Map();
function packageAt(importPath) {
  if (packages.has(importPath)) return packages.get(importPath);
  const src = sourceOf(importPath);
  const pkg = { structs: new Map(), named: new Map(), importPath };
  packages.set(importPath, pkg);
  if (!src) return pkg;
  let names;
  try {
    names = git(src[0], 'ls-tree', '--name-only', `${tag}:${src[1]}`).split('\n');
  } catch {
    return pkg;
  }
  for (const name of names.filter(
    (n) => n.endsWith('.go') && !n.endsWith('_test.go') && !n.startsWith('zz_generated') && !n.endsWith('.pb.go'),
  )) {
    const text = git(src[0], 'show', `${tag}:${src[1]}/${name}`);
    const imports = goImports(text);
    const resolveType = (expr) => {
      const bare = expr.replace(/^\*/, '');
      const dot = bare.indexOf('.');
      if (dot > 0 && !bare.startsWith('[]') && !bare.startsWith('map['))
        return { pkg: imports.get(bare.slice(0, dot)), name: bare.slice(dot + 1) };
      return { pkg: importPath, name: bare };
    };
    for (const m of text.matchAll(/^type\s+(\w+)\s+([^\s{=]+)\s*(?:\/\/.*)?$/gm)) {
      if (m[2] !== 'struct') pkg.named.set(m[1], { expr: m[2], resolve: resolveType });
    }
    for (const m of text.matchAll(/^type\s+(\w+)\s*=\s*([^\s{]+)\s*$/gm)) pkg.named.set(m[1], { expr: m[2], resolve: resolveType });
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const head = /^type\s+(\w+)\s+struct\s*\{\s*$/.exec(lines[i]);
      if (!head) continue;
      const fields = [];
      let depth = 1;
      for (i++; i < lines.length && depth > 0; i++) {
        const line = lines[i].trim();
        if (line.startsWith('//') || line === '') continue;
        if (line.startsWith('}')) {
          depth--;
          continue;
        }
        if (line.endsWith('{')) depth++;
        if (depth !== 1) continue;
        const tick = line.indexOf('`');
        const decl = (tick < 0 ? line.replace(/\/\/.*$/, '') : line.slice(0, tick)).trim().split(/\s+/);
        const tags = tick < 0 ? '' : line.slice(tick + 1, line.lastIndexOf('`'));
        const json = /json:"([^"]*)"/.exec(tags);
        const [jsonName, ...opts] = json ? json[1].split(',') : [''];
        if (jsonName === '-') continue;
        const embedded = decl.length === 1;
        const goType = embedded ? decl[0] : decl.slice(1).join(' ');
        if (embedded && (jsonName === '' || opts.includes('inline'))) {
          fields.push({ inline: resolveType(goType) });
          continue;
        }
        fields.push({
          json: jsonName || (embedded ? goType.replace(/^\*/, '').replace(/^\w+\./, '') : decl[0]),
          type: goType,
          omitempty: opts.includes('omitempty'),
          resolve: resolveType,
        });
      }
      i--;
      pkg.structs.set(head[1], fields);
    }
  }
  return pkg;
}

/** the kind of a Go type expression: pointer, slice, map, interface, scalar or struct */
function kindOf(expr, resolve, depth = 0) {
  if (expr.startsWith('*')) return 'pointer';
  if (expr.startsWith('[]')) return 'slice';
  if (expr.startsWith('map[')) return 'map';
  if (expr === 'interface{}' || expr === 'any') return 'interface';
  if (SCALARS.has(expr)) return 'scalar';
  if (depth > 8) return 'struct';
  const { pkg, name } = resolve(expr);
  if (!pkg) return 'struct';
  const p = packageAt(pkg);
  if (p.structs.has(name)) return 'struct';
  const named = p.named.get(name);
  if (named) return kindOf(named.expr, named.resolve, depth + 1);
  return 'struct';
}

/** JSON field -> code of one struct, inline embeddings flattened */
function codesOf(importPath, structName, out = {}) {
  const fields = packageAt(importPath).structs.get(structName);
  if (!fields) {
    const named = packageAt(importPath).named.get(structName);
    if (named) {
      const { pkg, name } = named.resolve(named.expr);
      if (pkg) return codesOf(pkg, name, out);
    }
    return out;
  }
  for (const f of fields) {
    if (f.inline) {
      if (f.inline.pkg) codesOf(f.inline.pkg, f.inline.name, out);
      continue;
    }
    if (f.json in out) continue;
    const kind = kindOf(f.type, f.resolve);
    let code;
    if (kind === 'struct') code = 's';
    else if (f.omitempty) code = kind === 'pointer' || kind === 'interface' ? 'p' : 'o';
    else code = kind === 'scalar' ? 'z' : 'N';
    out[f.json] = code;
  }
  return out;
}

const schemas = JSON.parse(readFileSync(schemasFile, 'utf8'));
const result = {};
const missing = [];
for (const [name, def] of Object.entries(schemas)) {
  if (!def.p) continue;
  const root = roots.find(([prefix]) => name.startsWith(prefix));
  if (!root) continue;
  const dot = name.lastIndexOf('.');
  const importPath = root[1] + name.slice(root[0].length, dot).replaceAll('.', '/');
  const codes = codesOf(importPath, name.slice(dot + 1));
  if (Object.keys(codes).length === 0) {
    missing.push(name);
    continue;
  }
  const listed = {};
  for (const field of Object.keys(def.p).sort()) {
    const code = codes[field];
    if (code === undefined) missing.push(`${name}.${field}`);
    else if (code !== 'p') listed[field] = code;
  }
  if (Object.keys(listed).length > 0) result[name] = listed;
}
writeFileSync(outFile, JSON.stringify(result) + '\n');
console.log(`${outFile}: ${Object.keys(result).length} definitions`);
if (missing.length) console.log(`not found in Go sources: ${missing.join(', ')}`);
