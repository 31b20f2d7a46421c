// A JSON reader that keeps repeated object members. JSON.parse keeps only the last one; Go's
// decoder sees every one: it reports each repeat and decodes it into what the earlier one left
// (members of a struct or map merge, lists are decoded element by element over the old ones).
// Used only for bodies the duplicate scan found repeats in.

/** an object that repeats at least one member name: its members in document order */
export class DuplicateKeyObject {
  constructor(readonly entries: [string, unknown][]) {}
}

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);

export interface JsonShape {
  /** object members in the text, repeats included */
  members: number;
  /** the root object's member names, in order (repeats included) */
  topKeys: string[];
  /** `{` or `[`: the bracket that first went deeper than the limit */
  tooDeep?: string;
}

/** One quick pass over valid JSON text (strings are skipped with indexOf): how many members
 *  it has, the root's member names, whether it nests too deep. Comparing `members` with the
 *  parsed value's member count tells whether a member was repeated. */
export function jsonShape(text: string, depthLimit: number): JsonShape {
  const n = text.length;
  const topKeys: string[] = [];
  let members = 0;
  let depth = 0;
  let tooDeep: string | undefined;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // the closing quote: the next one not escaped by an odd run of backslashes
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return { members, topKeys };
        let k = j - 1;
        while (text.charCodeAt(k) === 0x5c) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      let m = j + 1;
      while (m < n && WS.has(text.charCodeAt(m))) m++;
      if (text.charCodeAt(m) === 0x3a) {
        members++;
        if (depth === 1) {
          const raw = text.slice(i, j + 1);
          topKeys.push(raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1));
        }
        i = m + 1;
      } else {
        i = j + 1;
      }
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > depthLimit && tooDeep === undefined) tooDeep = text[i];
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
    i++;
  }
  return tooDeep === undefined ? { members, topKeys } : { members, topKeys, tooDeep };
}

/** members of every object in a parsed JSON value */
export function countMembers(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      count++;
      const x = o[k];
      if (typeof x === 'object' && x !== null) stack.push(x);
    }
  }
  return count;
}

/** Parses JSON text (already known to be valid JSON) into plain values, except objects with
 *  repeated members, which become DuplicateKeyObject. */
export function parseKeepingDuplicates(text: string): unknown {
  let i = 0;
  const skipSpace = (): void => {
    while (i < text.length && WS.has(text.charCodeAt(i))) i++;
  };
  const readString = (): string => {
    const start = i;
    let escaped = false;
    i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) {
        escaped = true;
        i += 2;
        continue;
      }
      if (c === 0x22) break;
      i++;
    }
    i++;
    return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
  };
  const value = (): unknown => {
    skipSpace();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: [string, unknown][] = [];
      const seen = new Set<string>();
      let repeated = false;
      skipSpace();
      if (text[i] === '}') {
        i++;
        return {};
      }
      for (;;) {
        skipSpace();
        const key = readString();
        skipSpace();
        i++; // ':'
        const v = value();
        if (seen.has(key)) repeated = true;
        seen.add(key);
        entries.push([key, v]);
        skipSpace();
        if (text[i++] === '}') break;
      }
      if (repeated) return new DuplicateKeyObject(entries);
      const out: Record<string, unknown> = {};
      for (const [k, v] of entries) out[k] = v;
      return out;
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      skipSpace();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        skipSpace();
        if (text[i++] === ']') break;
      }
      return out;
    }
    if (c === '"') return readString();
    const start = i;
    while (i < text.length && !WS.has(text.charCodeAt(i)) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++;
    return JSON.parse(text.slice(start, i)) as unknown;
  };
  return value();
}

/** the value JSON.parse would have given: the last of repeated members wins */
export function lastWins(v: unknown): unknown {
  if (v instanceof DuplicateKeyObject) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v.entries) out[k] = lastWins(x);
    return out;
  }
  if (Array.isArray(v)) {
    if (!v.some((x) => x instanceof DuplicateKeyObject || (typeof x === 'object' && x !== null))) return v;
    return v.map(lastWins);
  }
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = lastWins(o[k]);
    return o;
  }
  return v;
}
