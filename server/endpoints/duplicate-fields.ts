// Duplicate object members in a JSON body. JSON.parse silently keeps the last one; kube-apiserver
// reports them (a warning by default, 400 with fieldValidation=Strict), so the text is scanned.

interface Frame {
  isArray: boolean;
  path: string;
  keys: Set<string>;
  index: number;
}

function child(frame: Frame, key: string): string {
  if (frame.isArray) return `${frame.path}[${key}]`;
  return frame.path === '' ? key : `${frame.path}.${key}`;
}

/** Paths (`spec.containers[0].name`) of members that appear more than once in their object.
 *  The text must be valid JSON (parse it first). */
export function duplicateFields(text: string): string[] {
  return scanJson(text).duplicates;
}

export interface JsonScan {
  /** paths of repeated members, as duplicateFields gives them */
  duplicates: string[];
  /** the deepest nesting of objects and arrays */
  maxDepth: number;
  /** `{` or `[`: the bracket that first went deeper than `depthLimit` (Go's decoder names it) */
  tooDeep?: string;
}

/** One pass over valid JSON text: repeated members and nesting depth. */
export function scanJson(text: string, depthLimit = Infinity): JsonScan {
  const out: string[] = [];
  let maxDepth = 0;
  let tooDeep: string | undefined;
  const stack: Frame[] = [];
  let pendingKey: string | undefined;
  let i = 0;
  const n = text.length;

  const readString = (): string => {
    // i is at the opening quote
    let j = i + 1;
    let hasEscape = false;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 92 /* \ */) {
        hasEscape = true;
        j += 2;
        continue;
      }
      if (c === 34 /* " */) break;
      j++;
    }
    const raw = text.slice(i, j + 1);
    i = j + 1;
    return hasEscape ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  };

  const pathForValue = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return '';
    if (top.isArray) return child(top, String(top.index));
    return child(top, pendingKey ?? '');
  };

  while (i < n) {
    const c = text[i];
    switch (c) {
      case '{':
      case '[':
        stack.push({ isArray: c === '[', path: pathForValue(), keys: new Set(), index: 0 });
        if (stack.length > maxDepth) {
          maxDepth = stack.length;
          if (maxDepth > depthLimit && tooDeep === undefined) tooDeep = c;
        }
        pendingKey = undefined;
        i++;
        break;
      case '}':
      case ']':
        stack.pop();
        i++;
        break;
      case ',': {
        const top = stack[stack.length - 1];
        if (top?.isArray) top.index++;
        pendingKey = undefined;
        i++;
        break;
      }
      case '"': {
        const s = readString();
        const top = stack[stack.length - 1];
        if (top && !top.isArray && pendingKey === undefined) {
          // a member name: the next non-space character is ':'
          let k = i;
          while (k < n && (text[k] === ' ' || text[k] === '\n' || text[k] === '\r' || text[k] === '\t')) k++;
          if (text[k] === ':') {
            if (top.keys.has(s)) out.push(child(top, s));
            else top.keys.add(s);
            pendingKey = s;
            i = k + 1;
          }
        }
        break;
      }
      default:
        i++;
    }
  }
  return tooDeep === undefined ? { duplicates: out, maxDepth } : { duplicates: out, maxDepth, tooDeep };
}
