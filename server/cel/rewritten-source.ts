// kapi rewrites some CEL text before cel-js parses it (`matches` routed to RE2, message
// construction turned into calls). cel-js then reports positions in the rewritten text; a
// RewrittenSource maps them back, so that issues point where cel-go would point in the text
// the user wrote.

export interface RewrittenSource {
  /** the text cel-js parses */
  readonly text: string;
  /** the offset in the user's text of an offset in `text` */
  toOriginal(offset: number): number;
}

/** a replacement of `length` characters at `at` (of the text before it) by `text` */
export interface TextEdit {
  at: number;
  length: number;
  text: string;
  /** where an offset inside the inserted text points in the original (default: `at`) */
  anchor?: number;
}

export const unchanged = (text: string): RewrittenSource => ({ text, toOriginal: (offset) => offset });

/** the source with the edits applied (edits must not overlap) */
export function applyEdits(src: string, edits: readonly TextEdit[]): RewrittenSource {
  if (edits.length === 0) return unchanged(src);
  const sorted = [...edits].sort((a, b) => a.at - b.at);
  // for each edit: where its text starts in the output
  const spans: { out: number; edit: TextEdit }[] = [];
  let text = '';
  let pos = 0;
  for (const e of sorted) {
    text += src.slice(pos, e.at);
    spans.push({ out: text.length, edit: e });
    text += e.text;
    pos = e.at + e.length;
  }
  text += src.slice(pos);
  return {
    text,
    toOriginal(offset) {
      // the last edit starting at or before the offset
      let delta = 0;
      for (const { out, edit } of spans) {
        if (offset < out) break;
        if (offset < out + edit.text.length) return edit.anchor ?? edit.at;
        delta = edit.at + edit.length - (out + edit.text.length);
      }
      return offset + delta;
    },
  };
}

/** a second rewrite of an already rewritten source */
export function chain(first: RewrittenSource, second: (text: string) => RewrittenSource): RewrittenSource {
  const next = second(first.text);
  return { text: next.text, toOriginal: (offset) => first.toOriginal(next.toOriginal(offset)) };
}
