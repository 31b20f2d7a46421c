// CEL's words that are not identifiers: the language's literals and operator word, and the
// words cel-go reserves for later use (a reserved word used as an identifier is a syntax error).

/** reserved by cel-go: `reserved identifier: <word>` when used as one */
export const CEL_RESERVED_IDENTIFIERS: ReadonlySet<string> = new Set([
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** every word that cannot name a variable or field without escaping */
export const CEL_WORDS: ReadonlySet<string> = new Set(['true', 'false', 'null', 'in', ...CEL_RESERVED_IDENTIFIERS]);
