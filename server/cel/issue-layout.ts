// cel-go's layout of one issue (common.Error.ToDisplayString):
//   ERROR: <input>:<line>:<column>: <message>
//    | <the source line, tabs shown as spaces>
//    | ....^
// Columns count code points. Under a character that takes more than one byte in UTF-8 the
// caret line has a wide dot (U+FF0E), and the caret itself is wide (U+FF3E) under such a
// character, so that the caret stays under its character in a terminal. An issue without a
// location (line -1) has no source lines, nor has one on a line longer than 16384 bytes.

const WIDE_DOT = '\uff0e';
const WIDE_CARET = '\uff3e';
const MAX_SNIPPET_BYTES = 16384;

const isWide = (c: string | undefined): boolean => c !== undefined && c.codePointAt(0)! > 0x7f;

/** `line`: 1-based, or -1 for no location; `column`: 0-based, in code points */
export function issueLayout(message: string, line: number, column: number, sourceLine?: string): string {
  const head = `ERROR: <input>:${line}:${column + 1}: ${message}`;
  if (line < 1 || sourceLine === undefined || Buffer.byteLength(sourceLine) > MAX_SNIPPET_BYTES) return head;
  const shown = [...sourceLine.replace(/\t/g, ' ')];
  let caret = '';
  for (let i = 0; i < column && i < shown.length; i++) caret += isWide(shown[i]) ? WIDE_DOT : '.';
  caret += isWide(shown[column]) ? WIDE_CARET : '^';
  return `${head}\n | ${shown.join('')}\n | ${caret}`;
}

/** an issue at an offset (in code points) of the expression */
export function issueAtOffset(expression: readonly string[], offset: number, message: string): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < expression.length; i++) {
    if (expression[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  let lineEnd = lineStart;
  while (lineEnd < expression.length && expression[lineEnd] !== '\n') lineEnd++;
  return issueLayout(message, line, offset - lineStart, expression.slice(lineStart, lineEnd).join(''));
}
