// A JSON reader that keeps repeated object members. JSON.parse keeps only the last one; Go's
// decoder sees every one: it reports each repeat and decodes it into what the earlier one left
// (members of a struct or map merge, lists are decoded element by element over the old ones).
// Used only for bodies the duplicate scan found repeats in.

/** an object that repeats at least one member name: its members in document order */
export class DuplicateKeyObject {
  constructor(readonly entries: [string, unknown][]) {}
}

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);

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
