// A request's warnings, kept as kube-apiserver's warning recorder keeps them: each text once,
// and at most about 4096 characters (runes) of them in all. Once the texts would exceed that,
// every one is cut to 256 characters, and no more are taken once the cut ones fill it. A
// request can produce a warning per member of its body (repeated YAML keys): without the
// bound their headers, and checking each new one against the others, would grow without end.

/** characters of warning text the response carries before texts are cut */
export const WARNING_TOTAL_RUNES = 4 * 1024;
/** characters each text keeps once they are cut */
export const WARNING_ITEM_RUNES = 256;

/** the number of Unicode code points of a text (Go's rune count) */
function runeCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // the second half of a surrogate pair belongs to the rune its first half began
    if (c < 0xdc00 || c > 0xdfff || i === 0 || text.charCodeAt(i - 1) < 0xd800 || text.charCodeAt(i - 1) > 0xdbff) n++;
  }
  return n;
}

/** whether the recorded texts are past the total, so that each is cut */
export function warningsTruncated(warnings: readonly string[]): boolean {
  let total = 0;
  for (const w of warnings) total += runeCount(w);
  return total > WARNING_TOTAL_RUNES;
}

/** Records a warning. False when the recorder takes no more (the caller may stop producing). */
export function addWarning(warnings: string[], text: string): boolean {
  if (text === '') return true;
  let full = 0;
  let cut = 0;
  for (const w of warnings) {
    if (w === text) return true;
    const n = runeCount(w);
    full += n;
    cut += Math.min(n, WARNING_ITEM_RUNES);
  }
  if (full > WARNING_TOTAL_RUNES && cut >= WARNING_TOTAL_RUNES) return false;
  warnings.push(text);
  return true;
}

/** Records each warning of a list, in order, until the recorder takes no more. */
export function addWarnings(warnings: string[], texts: Iterable<string>): void {
  for (const t of texts) if (!addWarning(warnings, t)) return;
}

/** a text as the response carries it: whole, or cut to its first 256 characters */
export function truncatedWarning(text: string): string {
  if (text.length <= WARNING_ITEM_RUNES) return text;
  let runes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++;
    if (++runes === WARNING_ITEM_RUNES) return text.slice(0, i + 1);
  }
  return text;
}
