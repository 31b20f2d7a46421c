// Go's rendering of strings in messages clients compare: %q (strconv.Quote) and the
// unicode.IsPrint test behind it.

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isGoPrintable(ch: string): boolean {
  // printable ASCII without the Unicode expression: it answers for most characters checked
  if (ch.length === 1) {
    const c = ch.charCodeAt(0);
    if (c >= 0x20 && c < 0x7f) return true;
  }
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch);
}

/** every character of `s` is ASCII (so its UTF-8 bytes are its characters) */
export function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** every character of `s` is printable ASCII (so Go-printable) */
export function isPrintableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f) return false;
  }
  return true;
}

/** Go's strconv.Quote (%q) of a string. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        break;
      case '\\':
        out += '\\\\';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\x07':
        out += '\\a';
        break;
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      case '\v':
        out += '\\v';
        break;
      default:
        if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).padStart(2, '0');
        else if (isGoPrintable(ch)) out += ch;
        else if (code < 0x10000) out += '\\u' + code.toString(16).padStart(4, '0');
        else out += '\\U' + code.toString(16).padStart(8, '0');
    }
  }
  return out + '"';
}
