// Property names as CEL sees them (kube's apiserver/pkg/cel escaping): a name that is a CEL
// reserved word becomes `__{word}__`; otherwise a name made of [a-zA-Z0-9_.-/] (not starting
// with a digit) is spelled with `__` as `__underscores__`, `.` as `__dot__`, `-` as `__dash__`
// and `/` as `__slash__`; any other name cannot be reached from CEL.

import { CEL_WORDS } from './reserved-words.js';

const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/** the CEL spelling of a property name, or undefined when CEL cannot name it */
export function escapeProperty(name: string): string | undefined {
  if (CEL_WORDS.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '_' && name[i + 1] === '_') {
      out += '__underscores__';
      i++;
    } else if (c === '.') out += '__dot__';
    else if (c === '-') out += '__dash__';
    else if (c === '/') out += '__slash__';
    else out += c;
  }
  return out;
}
