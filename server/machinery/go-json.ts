// JSON text as Go's encoding/json writes it: JavaScript's JSON.stringify, with the few
// characters Go escapes inside strings escaped the same way.

// they only ever occur inside strings in JSON text, so replacing them in the whole text is safe
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
const HAS_GO_ESCAPED = /[<>&\u2028\u2029]/;
const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** JSON text with the characters Go's encoding/json escapes escaped as it does */
export function goEscape(text: string): string {
  return HAS_GO_ESCAPED.test(text) ? text.replace(GO_ESCAPED, (c) => GO_ESCAPES[c]) : text;
}

/** does `text` hold a character goEscape changes? */
export function needsGoEscape(text: string): boolean {
  return HAS_GO_ESCAPED.test(text);
}
