// How deep a YAML text nests, found in one pass over its characters before any parser sees
// it (the `yaml` package composes recursively and cannot be trusted with deep input).
//
// The count is an upper bound: block levels are the stack of indentation columns a line
// opens (a `- ` entry opens one more at its content), flow levels are the open `[`/`{`.
// Quoted scalars, comments and the content of `|`/`>` block scalars are skipped; a plain
// scalar continued on a deeper line or a scalar entry may count one level more than it is.
// Where the scanner cannot be sure a character is text, it counts it as structure, so a
// document can be refused a little early, never let through deeper than the limit.

import type { TooDeep } from './decode-limits.js';

const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;

type Quote = 0 | 0x22 | 0x27;

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB || c === CR || Number.isNaN(c);
}

function isFlowIndicator(c: number): boolean {
  return c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d;
}

/** Where a YAML text first nests deeper than `limit`, or undefined. */
export function yamlTooDeep(text: string, limit: number): TooDeep | undefined {
  const blockColumns: number[] = [];
  let flowDepth = 0;
  let quote: Quote = 0;
  /** inside a `|`/`>` scalar: the indentation of its owner, and of its content once seen */
  let scalarOwner: number | undefined;
  let scalarContent: number | undefined;

  let lineStart = 0;
  const end = text.length;
  while (lineStart <= end) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = end;
    let indent = 0;
    while (lineStart + indent < lineEnd && text.charCodeAt(lineStart + indent) === SPACE) indent++;
    const first = lineStart + indent;
    const blankLine = first >= lineEnd || (isBlank(text.charCodeAt(first)) && text.slice(first, lineEnd).trim() === '');

    let pos = lineStart;
    let nodeStart = false;
    let skipLine = false;
    if (quote === 0 && scalarOwner !== undefined) {
      if (blankLine) skipLine = true;
      else if (scalarContent === undefined && indent > scalarOwner) {
        scalarContent = indent;
        skipLine = true;
      } else if (scalarContent !== undefined && indent >= scalarContent) {
        skipLine = true;
      } else {
        scalarOwner = undefined;
        scalarContent = undefined;
      }
    }
    if (!skipLine && quote === 0 && flowDepth === 0) {
      const c = text.charCodeAt(first);
      if (blankLine || c === 0x23 /* # */) {
        skipLine = true;
      } else if (indent === 0 && (text.startsWith('---', first) || text.startsWith('...', first)) && isBlank(text.charCodeAt(first + 3))) {
        // a document boundary: the next document starts from nothing
        blockColumns.length = 0;
        pos = first + 3;
        nodeStart = true;
      } else if (indent === 0 && c === 0x25 /* % */) {
        skipLine = true;
      } else {
        while (blockColumns.length > 0 && blockColumns[blockColumns.length - 1] > indent) blockColumns.pop();
        if (blockColumns.length === 0 || blockColumns[blockColumns.length - 1] < indent) blockColumns.push(indent);
        if (blockColumns.length > limit) return { offset: first, char: text[first] };
        pos = first;
        nodeStart = true;
      }
    }

    if (!skipLine) {
      let afterQuote = false;
      let dashColumn = -1;
      let prevBlank = true;
      while (pos < lineEnd) {
        const c = text.charCodeAt(pos);
        if (quote !== 0) {
          if (quote === 0x22 && c === 0x5c) {
            pos += 2;
            continue;
          }
          if (c === quote) {
            if (quote === 0x27 && text.charCodeAt(pos + 1) === 0x27) {
              pos += 2;
              continue;
            }
            quote = 0;
            afterQuote = true;
            prevBlank = false;
          }
          pos++;
          continue;
        }
        if (c === SPACE || c === TAB || c === CR) {
          prevBlank = true;
          pos++;
          continue;
        }
        if (c === 0x23 /* # */ && prevBlank) break;
        const next = text.charCodeAt(pos + 1);
        const wasAfterQuote = afterQuote;
        afterQuote = false;
        prevBlank = false;
        if (flowDepth > 0) {
          if (c === 0x5b || c === 0x7b) {
            flowDepth++;
            if (blockColumns.length + flowDepth > limit) return { offset: pos, char: text[pos] };
            nodeStart = true;
          } else if (c === 0x5d || c === 0x7d) {
            if (flowDepth > 0) flowDepth--;
            nodeStart = false;
          } else if (c === 0x2c /* , */) {
            nodeStart = true;
          } else if (c === 0x3a /* : */) {
            nodeStart = wasAfterQuote || isBlank(next) || isFlowIndicator(next) || pos + 1 >= lineEnd;
          } else if ((c === 0x22 || c === 0x27) && nodeStart) {
            quote = c;
          } else if (c === 0x3f /* ? */ && nodeStart && (isBlank(next) || pos + 1 >= lineEnd)) {
            // an explicit key: still at a node's start
          } else {
            nodeStart = false;
          }
          pos++;
          continue;
        }
        if (!nodeStart) {
          // inside a plain scalar or after a quoted one: only `: ` starts a value
          if (c === 0x3a && (isBlank(next) || pos + 1 >= lineEnd)) nodeStart = true;
          pos++;
          continue;
        }
        const atEndOrBlank = isBlank(next) || pos + 1 >= lineEnd;
        if ((c === 0x2d /* - */ || c === 0x3f) /* ? */ && atEndOrBlank) {
          let content = pos + 1;
          while (content < lineEnd && isBlank(text.charCodeAt(content))) content++;
          if (content < lineEnd) {
            blockColumns.push(content - lineStart);
            if (blockColumns.length > limit) return { offset: pos, char: text[pos] };
          }
          dashColumn = c === 0x2d ? pos - lineStart : -1;
          pos = content;
          continue;
        }
        if (c === 0x3a && atEndOrBlank) {
          pos++;
          continue;
        }
        if (c === 0x5b || c === 0x7b) {
          flowDepth = 1;
          if (blockColumns.length + flowDepth > limit) return { offset: pos, char: text[pos] };
          pos++;
          continue;
        }
        if (c === 0x22 || c === 0x27) {
          quote = c;
          nodeStart = false;
          pos++;
          continue;
        }
        if (c === 0x7c /* | */ || c === 0x3e /* > */) {
          const owner = dashColumn >= 0 ? dashColumn : blockColumns.length > 0 ? blockColumns[blockColumns.length - 1] : -1;
          scalarOwner = owner;
          scalarContent = undefined;
          break;
        }
        if (c === 0x26 /* & */ || c === 0x21 /* ! */) {
          // an anchor or a tag: the node itself follows
          while (pos < lineEnd && !isBlank(text.charCodeAt(pos))) pos++;
          continue;
        }
        nodeStart = false;
        dashColumn = -1;
        pos++;
      }
    }
    lineStart = lineEnd + 1;
  }
  return undefined;
}
