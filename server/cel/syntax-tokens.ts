// CEL's tokens as cel-go's ANTLR lexer reads them (the lexer rules of cel-go's CEL.g4): the
// longest match wins, and where no rule matches, the error names what the lexer had read up to
// and including the character where every rule failed, then that character is skipped.

/** token types, numbered as CEL's grammar numbers them (ANTLR lists expected sets in this order) */
export enum T {
  EOF = -1,
  EQUALS = 1,
  NOT_EQUALS,
  IN,
  LESS,
  LESS_EQUALS,
  GREATER_EQUALS,
  GREATER,
  LOGICAL_AND,
  LOGICAL_OR,
  LBRACKET,
  RPRACKET,
  LBRACE,
  RBRACE,
  LPAREN,
  RPAREN,
  DOT,
  COMMA,
  MINUS,
  EXCLAM,
  QUESTIONMARK,
  COLON,
  PLUS,
  STAR,
  SLASH,
  PERCENT,
  CEL_TRUE,
  CEL_FALSE,
  NUL,
  NUM_FLOAT = 31,
  NUM_INT,
  NUM_UINT,
  STRING,
  BYTES,
  IDENTIFIER,
  ESC_IDENTIFIER,
}

/** how ANTLR names each token type in its messages */
export const NAMES: Record<number, string> = {
  [T.EOF]: '<EOF>',
  [T.EQUALS]: "'=='",
  [T.NOT_EQUALS]: "'!='",
  [T.IN]: "'in'",
  [T.LESS]: "'<'",
  [T.LESS_EQUALS]: "'<='",
  [T.GREATER_EQUALS]: "'>='",
  [T.GREATER]: "'>'",
  [T.LOGICAL_AND]: "'&&'",
  [T.LOGICAL_OR]: "'||'",
  [T.LBRACKET]: "'['",
  [T.RPRACKET]: "']'",
  [T.LBRACE]: "'{'",
  [T.RBRACE]: "'}'",
  [T.LPAREN]: "'('",
  [T.RPAREN]: "')'",
  [T.DOT]: "'.'",
  [T.COMMA]: "','",
  [T.MINUS]: "'-'",
  [T.EXCLAM]: "'!'",
  [T.QUESTIONMARK]: "'?'",
  [T.COLON]: "':'",
  [T.PLUS]: "'+'",
  [T.STAR]: "'*'",
  [T.SLASH]: "'/'",
  [T.PERCENT]: "'%'",
  [T.CEL_TRUE]: "'true'",
  [T.CEL_FALSE]: "'false'",
  [T.NUL]: "'null'",
  [T.NUM_FLOAT]: 'NUM_FLOAT',
  [T.NUM_INT]: 'NUM_INT',
  [T.NUM_UINT]: 'NUM_UINT',
  [T.STRING]: 'STRING',
  [T.BYTES]: 'BYTES',
  [T.IDENTIFIER]: 'IDENTIFIER',
  [T.ESC_IDENTIFIER]: 'ESC_IDENTIFIER',
};

export interface Token {
  type: T;
  /** offsets in code points */
  start: number;
  end: number;
  text: string;
}

export interface SyntaxIssue {
  /** offset in code points */
  at: number;
  message: string;
}

const FIXED: [string, T][] = [
  ['==', T.EQUALS],
  ['!=', T.NOT_EQUALS],
  ['<=', T.LESS_EQUALS],
  ['>=', T.GREATER_EQUALS],
  ['&&', T.LOGICAL_AND],
  ['||', T.LOGICAL_OR],
  ['<', T.LESS],
  ['>', T.GREATER],
  ['[', T.LBRACKET],
  [']', T.RPRACKET],
  ['{', T.LBRACE],
  ['}', T.RBRACE],
  ['(', T.LPAREN],
  [')', T.RPAREN],
  ['.', T.DOT],
  [',', T.COMMA],
  ['-', T.MINUS],
  ['!', T.EXCLAM],
  ['?', T.QUESTIONMARK],
  [':', T.COLON],
  ['+', T.PLUS],
  ['*', T.STAR],
  ['/', T.SLASH],
  ['%', T.PERCENT],
];
const KEYWORDS: Record<string, T> = { in: T.IN, true: T.CEL_TRUE, false: T.CEL_FALSE, null: T.NUL };

/** how far one lexer rule got from a start: the end of its longest match, and where it died */
interface Run {
  accept?: number;
  dead: number;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const isLetter = (c: string | undefined): boolean => c !== undefined && /^[a-zA-Z]$/.test(c);
const isWhitespace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';

export class Lexer {
  readonly errors: SyntaxIssue[] = [];
  private i = 0;

  constructor(private readonly s: readonly string[]) {}

  tokens(): Token[] {
    const out: Token[] = [];
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i];
      if (isWhitespace(c)) {
        this.i++;
        continue;
      }
      if (c === '/' && s[this.i + 1] === '/') {
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
        continue;
      }
      const start = this.i;
      const best = this.longest(start);
      if (best) {
        out.push({ type: best.type, start, end: best.end, text: s.slice(start, best.end).join('') });
        this.i = best.end;
        continue;
      }
      // nothing matched: ANTLR reports what it read up to and including the character where
      // every rule failed, then skips that character
      const dead = this.deadAt(start);
      const stop = Math.min(dead, s.length - 1);
      this.errors.push({ at: start, message: `Syntax error: token recognition error at: '${s.slice(start, stop + 1).join('')}'` });
      this.i = dead < s.length ? dead + 1 : s.length;
    }
    out.push({ type: T.EOF, start: s.length, end: s.length, text: '<EOF>' });
    return out;
  }

  private runs(p: number): { type: T; run: Run }[] {
    const s = this.s;
    const runs: { type: T; run: Run }[] = [];
    for (const [lit, type] of FIXED) {
      let k = 0;
      while (k < lit.length && s[p + k] === lit[k]) k++;
      runs.push({ type, run: k === lit.length ? { accept: p + k, dead: p + k } : { dead: p + k } });
    }
    // '=', '&' and '|' alone start no token but the lexer reads them looking for a second one
    for (const lone of ['=', '&', '|']) if (s[p] === lone) runs.push({ type: T.EQUALS, run: { dead: p + 1 } });
    runs.push({ type: T.IDENTIFIER, run: this.identifier(p) });
    runs.push(...this.numbers(p));
    runs.push({ type: T.STRING, run: this.string(p) });
    if (s[p] === 'b' || s[p] === 'B') {
      const r = this.string(p + 1);
      runs.push({ type: T.BYTES, run: r });
    }
    runs.push({ type: T.ESC_IDENTIFIER, run: this.escapedIdentifier(p) });
    return runs;
  }

  private longest(p: number): { type: T; end: number } | undefined {
    let best: { type: T; end: number } | undefined;
    for (const { type, run } of this.runs(p)) {
      if (run.accept === undefined || run.accept <= p) continue;
      let t = type;
      if (t === T.IDENTIFIER) t = KEYWORDS[this.s.slice(p, run.accept).join('')] ?? T.IDENTIFIER;
      // the longest match wins; on a tie, the rule listed first
      if (!best || run.accept > best.end) best = { type: t, end: run.accept };
    }
    return best;
  }

  private deadAt(p: number): number {
    return Math.max(p, ...this.runs(p).map((r) => r.run.dead));
  }

  private identifier(p: number): Run {
    const s = this.s;
    if (!(isLetter(s[p]) || s[p] === '_')) return { dead: p };
    let k = p + 1;
    while (isLetter(s[k]) || isDigit(s[k]) || s[k] === '_') k++;
    return { accept: k, dead: k };
  }

  private escapedIdentifier(p: number): Run {
    const s = this.s;
    if (s[p] !== '`') return { dead: p };
    let k = p + 1;
    while (s[k] !== undefined && /^[a-zA-Z0-9_.\-/ ]$/.test(s[k]!)) k++;
    if (s[k] === '`' && k > p + 1) return { accept: k + 1, dead: k + 1 };
    return { dead: k };
  }

  /** NUM_FLOAT, NUM_INT and NUM_UINT */
  private numbers(p: number): { type: T; run: Run }[] {
    const s = this.s;
    const out: { type: T; run: Run }[] = [];
    const digits = (k: number): number => {
      while (isDigit(s[k])) k++;
      return k;
    };
    const exponent = (k: number): Run => {
      if (s[k] !== 'e' && s[k] !== 'E') return { dead: k };
      let j = k + 1;
      if (s[j] === '+' || s[j] === '-') j++;
      const e = digits(j);
      return e > j ? { accept: e, dead: e } : { dead: j };
    };
    if (s[p] === '0' && (s[p + 1] === 'x' || s[p + 1] === 'X')) {
      let k = p + 2;
      while (isHex(s[k])) k++;
      if (k > p + 2) {
        out.push({ type: T.NUM_INT, run: { accept: k, dead: k } });
        out.push({ type: T.NUM_UINT, run: s[k] === 'u' || s[k] === 'U' ? { accept: k + 1, dead: k + 1 } : { dead: k } });
      } else out.push({ type: T.NUM_INT, run: { dead: k } });
    }
    if (isDigit(s[p])) {
      const d = digits(p);
      out.push({ type: T.NUM_INT, run: { accept: d, dead: d } });
      out.push({ type: T.NUM_UINT, run: s[d] === 'u' || s[d] === 'U' ? { accept: d + 1, dead: d + 1 } : { dead: d } });
      if (s[d] === '.') {
        const f = digits(d + 1);
        if (f > d + 1) {
          const e = exponent(f);
          out.push({ type: T.NUM_FLOAT, run: e.accept !== undefined ? e : { accept: f, dead: e.dead } });
        } else out.push({ type: T.NUM_FLOAT, run: { dead: d + 1 } });
      } else {
        const e = exponent(d);
        out.push({ type: T.NUM_FLOAT, run: e.accept !== undefined ? e : { dead: e.dead } });
      }
    } else if (s[p] === '.' && isDigit(s[p + 1])) {
      const f = digits(p + 1);
      const e = exponent(f);
      out.push({ type: T.NUM_FLOAT, run: e.accept !== undefined ? e : { accept: f, dead: e.dead } });
    }
    return out;
  }

  /** the length of an escape sequence at k (0: none valid), or where it died */
  private escape(k: number): { end?: number; dead: number } {
    const s = this.s;
    const c = s[k + 1];
    if (c !== undefined && 'abfnrtv"\'\\?`'.includes(c)) return { end: k + 2, dead: k + 2 };
    if (c === 'x' || c === 'X') return this.hexRun(k + 2, 2);
    if (c === 'u') return this.hexRun(k + 2, 4);
    if (c === 'U') return this.hexRun(k + 2, 8);
    if (c !== undefined && c >= '0' && c <= '3') {
      if (s[k + 2] !== undefined && s[k + 2]! >= '0' && s[k + 2]! <= '7') {
        if (s[k + 3] !== undefined && s[k + 3]! >= '0' && s[k + 3]! <= '7') return { end: k + 4, dead: k + 4 };
        return { dead: k + 3 };
      }
      return { dead: k + 2 };
    }
    return { dead: k + 1 };
  }

  private hexRun(k: number, n: number): { end?: number; dead: number } {
    for (let j = 0; j < n; j++) if (!isHex(this.s[k + j])) return { dead: k + j };
    return { end: k + n, dead: k + n };
  }

  /** a quoted string (with its optional raw prefix) starting at p */
  private string(p: number): Run {
    const s = this.s;
    let k = p;
    let raw = false;
    if (s[k] === 'r' || s[k] === 'R') {
      raw = true;
      k++;
    }
    const q = s[k];
    if (q !== '"' && q !== "'") return { dead: k };
    const triple = s[k + 1] === q && s[k + 2] === q;
    // the single-quoted form: `""` is an empty string even where a triple quote follows
    const single = this.quoted(k, q, raw, false);
    if (!triple) return single;
    const long = this.quoted(k, q, raw, true);
    return { accept: long.accept ?? single.accept, dead: Math.max(single.dead, long.dead) };
  }

  private quoted(k: number, q: string, raw: boolean, triple: boolean): Run {
    const s = this.s;
    let j = k + (triple ? 3 : 1);
    for (;;) {
      const c = s[j];
      if (c === undefined) return { dead: j };
      if (triple ? c === q && s[j + 1] === q && s[j + 2] === q : c === q)
        return { accept: j + (triple ? 3 : 1), dead: j + (triple ? 3 : 1) };
      if (!triple && (c === '\n' || c === '\r')) return { dead: j };
      if (c === '\\' && !raw) {
        const e = this.escape(j);
        if (e.end === undefined) return { dead: e.dead };
        j = e.end;
        continue;
      }
      j++;
    }
  }
}
