// Syntax errors as cel-go reports them. cel-go parses with a parser ANTLR generates from CEL's
// grammar, so its syntax errors are ANTLR's: `token recognition error at: '...'` from the
// lexer, and `mismatched input 'x' expecting {...}`, `extraneous input 'x' expecting ...`,
// `missing 'x' at 'y'` and `no viable alternative at input '...'` from the parser, each at its
// token's line and column, sorted by position. cel-js words its own, so an expression it
// refuses is read again here: CEL's tokens by the grammar's lexer rules (longest match, an
// unrecognized character reported with what the lexer had read), then the grammar's rules
// with ANTLR's default recovery (one token deleted or inserted where that repairs the input,
// else the error reported once and tokens skipped to what may follow the rule).
// cel-go's own checks of the parse follow: reserved identifiers.

/** token types, numbered as CEL's grammar numbers them (ANTLR lists expected sets in this order) */
const enum T {
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

const NAMES: Record<number, string> = {
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

interface Token {
  type: T;
  /** offsets in code points */
  start: number;
  end: number;
  text: string;
}

interface SyntaxIssue {
  /** offset in code points */
  at: number;
  message: string;
}

// ---- lexer ----

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

class Lexer {
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
      if (triple ? c === q && s[j + 1] === q && s[j + 2] === q : c === q) return { accept: j + (triple ? 3 : 1), dead: j + (triple ? 3 : 1) };
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

// ---- parser ----

class RecognitionError extends Error {}

type TokenSet = ReadonlySet<T>;
const set = (...ts: T[]): TokenSet => new Set(ts);
const union = (...sets: TokenSet[]): TokenSet => new Set(sets.flatMap((x) => [...x]));

const LITERALS = [T.CEL_TRUE, T.CEL_FALSE, T.NUL, T.NUM_FLOAT, T.NUM_INT, T.NUM_UINT, T.STRING, T.BYTES];
const PRIMARY_START = set(T.LBRACKET, T.LBRACE, T.LPAREN, T.DOT, T.MINUS, T.IDENTIFIER, ...LITERALS);
const EXPR_START = union(PRIMARY_START, set(T.EXCLAM, T.MINUS));
const RELATIONS = set(T.LESS, T.LESS_EQUALS, T.GREATER_EQUALS, T.GREATER, T.EQUALS, T.NOT_EQUALS, T.IN);
const PRODUCTS = set(T.STAR, T.SLASH, T.PERCENT);
const SUMS = set(T.PLUS, T.MINUS);
/** cel-go's reserved words, refused as identifiers */
const RESERVED = new Set(['as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

function display(t: Token): string {
  if (t.type === T.EOF) return "'<EOF>'";
  return `'${t.text.replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
}

function expecting(s: TokenSet): string {
  const sorted = [...s].sort((a, b) => a - b);
  if (sorted.length === 1) return NAMES[sorted[0]!]!;
  return `{${sorted.map((t) => NAMES[t]).join(', ')}}`;
}

class Parser {
  readonly errors: SyntaxIssue[] = [];
  readonly reserved: SyntaxIssue[] = [];
  private p = 0;
  private recovering = false;
  private lastErrorIndex = -1;

  constructor(private readonly tokens: Token[]) {}

  private la(k = 1): Token {
    return this.tokens[Math.min(this.p + k - 1, this.tokens.length - 1)]!;
  }

  private consume(): void {
    if (this.la().type !== T.EOF) this.p++;
  }

  private report(at: Token, message: string): void {
    if (this.recovering) return;
    this.recovering = true;
    this.errors.push({ at: at.start, message: `Syntax error: ${message}` });
  }

  /** a token the grammar requires; `after`: what may follow it here */
  private match(type: T, after: TokenSet): void {
    const t = this.la();
    if (t.type === type) {
      this.consume();
      this.recovering = false;
      return;
    }
    if (this.la(2).type === type) {
      this.report(t, `extraneous input ${display(t)} expecting ${expecting(set(type))}`);
      this.consume();
      this.consume();
      this.recovering = false;
      return;
    }
    if (after.has(t.type)) {
      this.report(t, `missing ${NAMES[type]} at ${display(t)}`);
      return;
    }
    this.report(t, `mismatched input ${display(t)} expecting ${expecting(set(type))}`);
    throw new RecognitionError();
  }

  /** a decision that needs one of `expected`: one stray token is dropped, else the error */
  private sync(expected: TokenSet): void {
    const t = this.la();
    if (expected.has(t.type)) return;
    if (expected.has(this.la(2).type)) {
      this.report(t, `extraneous input ${display(t)} expecting ${expecting(expected)}`);
      this.consume();
      return;
    }
    this.report(t, `mismatched input ${display(t)} expecting ${expecting(expected)}`);
    throw new RecognitionError();
  }

  /** runs a rule; after an error, skips to a token that may follow it */
  private rule(follow: TokenSet, body: () => void): void {
    try {
      body();
    } catch (err) {
      if (!(err instanceof RecognitionError)) throw err;
      if (this.lastErrorIndex === this.p) this.consume();
      this.lastErrorIndex = this.p;
      while (this.la().type !== T.EOF && !follow.has(this.la().type)) this.consume();
    }
  }

  parse(): void {
    const follow = set(T.EOF);
    this.expr(follow);
    const t = this.la();
    if (t.type === T.EOF) return;
    if (this.la(2).type === T.EOF) this.report(t, `extraneous input ${display(t)} expecting <EOF>`);
    else this.report(t, `mismatched input ${display(t)} expecting <EOF>`);
  }

  private expr(follow: TokenSet): void {
    this.rule(follow, () => {
      this.conditionalOr(union(follow, set(T.QUESTIONMARK)));
      if (this.la().type === T.QUESTIONMARK) {
        this.match(T.QUESTIONMARK, EXPR_START);
        this.conditionalOr(union(follow, set(T.COLON)));
        this.match(T.COLON, EXPR_START);
        this.expr(follow);
      }
    });
  }

  private binary(follow: TokenSet, ops: TokenSet, operand: (f: TokenSet) => void): void {
    this.rule(follow, () => {
      const f = union(follow, ops);
      operand(f);
      while (ops.has(this.la().type)) {
        this.match(this.la().type, EXPR_START);
        operand(f);
      }
    });
  }

  private conditionalOr(follow: TokenSet): void {
    this.binary(follow, set(T.LOGICAL_OR), (f) => this.conditionalAnd(f));
  }

  private conditionalAnd(follow: TokenSet): void {
    this.binary(follow, set(T.LOGICAL_AND), (f) => this.relation(f));
  }

  private relation(follow: TokenSet): void {
    this.binary(follow, RELATIONS, (f) => this.calc(f));
  }

  private calc(follow: TokenSet): void {
    this.binary(follow, SUMS, (f) => this.binary(f, PRODUCTS, (g) => this.unary(g)));
  }

  private unary(follow: TokenSet): void {
    this.rule(follow, () => {
      this.sync(EXPR_START);
      const t = this.la();
      if (t.type === T.EXCLAM) {
        while (this.la().type === T.EXCLAM) this.match(T.EXCLAM, EXPR_START);
      } else if (t.type === T.MINUS && !this.isNumber(this.la(2).type)) {
        // negations: each '-' is one unless the next one signs a number
        this.startsMember(this.la(2), this.la(1));
        do this.match(T.MINUS, EXPR_START);
        while (this.la().type === T.MINUS && !this.isNumber(this.la(2).type) && this.startsMember(this.la(2), this.la(1)));
      }
      this.member(follow);
    });
  }

  /** whether a member can start at `next` after a '-' (`from`); if not, no alternative fits */
  private startsMember(next: Token, from: Token): boolean {
    if (PRIMARY_START.has(next.type)) return true;
    this.report(next, `no viable alternative at input '${from.text}${next.type === T.EOF ? '' : next.text}'`);
    throw new RecognitionError();
  }

  private isNumber(t: T): boolean {
    return t === T.NUM_INT || t === T.NUM_FLOAT;
  }

  private member(follow: TokenSet): void {
    this.rule(follow, () => {
      const f = union(follow, set(T.DOT, T.LBRACKET));
      this.primary(f);
      for (;;) {
        const t = this.la();
        if (t.type === T.DOT) {
          const next = this.la(2);
          const afterOpt = next.type === T.QUESTIONMARK ? this.la(3) : next;
          if (next.type === T.IDENTIFIER && this.la(3).type === T.LPAREN) {
            this.consume();
            this.consume();
            this.call(f);
            continue;
          }
          if (afterOpt.type === T.IDENTIFIER || afterOpt.type === T.ESC_IDENTIFIER) {
            this.consume();
            if (next.type === T.QUESTIONMARK) this.consume();
            this.consume();
            this.recovering = false;
            continue;
          }
          // neither a selection nor a method call: no alternative of the rule fits
          const stop = next.type === T.QUESTIONMARK ? afterOpt : next;
          const text = this.tokens.slice(this.p, this.tokens.indexOf(stop) + (stop.type === T.EOF ? 0 : 1)).map((x) => x.text).join('');
          this.report(stop, `no viable alternative at input '${text}'`);
          throw new RecognitionError();
        }
        if (t.type === T.LBRACKET) {
          this.consume();
          if (this.la().type === T.QUESTIONMARK) this.consume();
          this.expr(union(f, set(T.RPRACKET)));
          this.match(T.RPRACKET, f);
          continue;
        }
        return;
      }
    });
  }

  /** `(args?)` after a function's name */
  private call(follow: TokenSet): void {
    this.match(T.LPAREN, EXPR_START);
    this.sync(union(EXPR_START, set(T.RPAREN)));
    if (this.la().type !== T.RPAREN) this.exprList(union(follow, set(T.RPAREN)));
    this.match(T.RPAREN, follow);
  }

  private exprList(follow: TokenSet): void {
    this.rule(follow, () => {
      const f = union(follow, set(T.COMMA));
      this.expr(f);
      while (this.la().type === T.COMMA) {
        this.match(T.COMMA, EXPR_START);
        this.expr(f);
      }
    });
  }

  private primary(follow: TokenSet): void {
    this.rule(follow, () => {
      const t = this.la();
      switch (t.type) {
        case T.DOT:
        case T.IDENTIFIER: {
          if (t.type === T.DOT) this.consume();
          const id = this.la();
          if (id.type !== T.IDENTIFIER) {
            this.match(T.IDENTIFIER, follow);
            return;
          }
          // a message name: IDENTIFIER ('.' IDENTIFIER)* '{'
          let k = 2;
          while (this.la(k).type === T.DOT && this.la(k + 1).type === T.IDENTIFIER) k += 2;
          if (this.la(k).type === T.LBRACE) {
            for (let j = 1; j < k; j++) this.consume();
            this.recovering = false;
            this.fields(follow);
            return;
          }
          if (RESERVED.has(id.text)) this.reserved.push({ at: id.start, message: `reserved identifier: ${id.text}` });
          this.consume();
          this.recovering = false;
          if (this.la().type === T.LPAREN) this.call(follow);
          return;
        }
        case T.LPAREN:
          this.consume();
          this.expr(union(follow, set(T.RPAREN)));
          this.match(T.RPAREN, follow);
          return;
        case T.LBRACKET:
          this.consume();
          this.sync(union(EXPR_START, set(T.QUESTIONMARK, T.COMMA, T.RPRACKET)));
          if (this.la().type !== T.RPRACKET && this.la().type !== T.COMMA) {
            const f = union(follow, set(T.COMMA, T.RPRACKET));
            this.rule(f, () => {
              this.optExpr(f);
              while (this.la().type === T.COMMA && this.la(2).type !== T.RPRACKET) {
                this.match(T.COMMA, EXPR_START);
                this.optExpr(f);
              }
            });
          }
          if (this.la().type === T.COMMA) this.consume();
          this.match(T.RPRACKET, follow);
          return;
        case T.LBRACE:
          this.consume();
          this.sync(union(EXPR_START, set(T.QUESTIONMARK, T.COMMA, T.RBRACE)));
          if (this.la().type !== T.RBRACE && this.la().type !== T.COMMA) {
            const f = union(follow, set(T.COMMA, T.RBRACE));
            const entry = (): void => {
              this.optExpr(union(f, set(T.COLON)));
              this.match(T.COLON, EXPR_START);
              this.expr(f);
            };
            this.rule(f, () => {
              entry();
              while (this.la().type === T.COMMA && this.la(2).type !== T.RBRACE) {
                this.match(T.COMMA, EXPR_START);
                entry();
              }
            });
          }
          if (this.la().type === T.COMMA) this.consume();
          this.match(T.RBRACE, follow);
          return;
        case T.MINUS:
          if (this.isNumber(this.la(2).type)) {
            this.consume();
            this.consume();
            this.recovering = false;
            return;
          }
          this.report(this.la(2), `no viable alternative at input '${t.text}${this.la(2).type === T.EOF ? '' : this.la(2).text}'`);
          throw new RecognitionError();
        default:
          if (LITERALS.includes(t.type)) {
            this.consume();
            this.recovering = false;
            return;
          }
          // a stray token before a primary is dropped (then the primary read), else reported
          this.sync(PRIMARY_START);
          this.primary(follow);
      }
    });
  }

  private optExpr(follow: TokenSet): void {
    if (this.la().type === T.QUESTIONMARK) this.consume();
    this.expr(follow);
  }

  /** `{field: value, ...}` of a message construction */
  private fields(follow: TokenSet): void {
    this.match(T.LBRACE, set(T.RBRACE));
    const fieldStart = set(T.RBRACE, T.COMMA, T.QUESTIONMARK, T.IDENTIFIER, T.ESC_IDENTIFIER);
    this.sync(fieldStart);
    const f = union(follow, set(T.COMMA, T.RBRACE));
    const field = (): void => {
      if (this.la().type === T.QUESTIONMARK) this.consume();
      const id = this.la();
      if (id.type === T.IDENTIFIER || id.type === T.ESC_IDENTIFIER) {
        this.consume();
        this.recovering = false;
      } else this.match(T.IDENTIFIER, set(T.COLON));
      this.match(T.COLON, EXPR_START);
      this.expr(f);
    };
    if (this.la().type !== T.RBRACE && this.la().type !== T.COMMA) {
      this.rule(f, () => {
        field();
        while (this.la().type === T.COMMA && this.la(2).type !== T.RBRACE) {
          this.match(T.COMMA, set(T.QUESTIONMARK, T.IDENTIFIER, T.ESC_IDENTIFIER));
          field();
        }
      });
    }
    if (this.la().type === T.COMMA) this.consume();
    this.match(T.RBRACE, follow);
  }
}

/** line and column (1-based, in code points) of an offset, and the line's text */
function position(chars: readonly string[], at: number): { line: number; column: number; text: string } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at && i < chars.length; i++) {
    if (chars[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  let lineEnd = lineStart;
  while (lineEnd < chars.length && chars[lineEnd] !== '\n') lineEnd++;
  return { line, column: at - lineStart + 1, text: chars.slice(lineStart, lineEnd).join('') };
}

/** cel-go's display of issues: each with its source line and a caret, in source order */
export function displayIssues(expression: string, issues: readonly SyntaxIssue[]): string {
  const chars = [...expression];
  return [...issues]
    .sort((a, b) => a.at - b.at)
    .map((issue) => {
      const { line, column, text } = position(chars, issue.at);
      return `ERROR: <input>:${line}:${column}: ${issue.message}\n | ${text}\n | ${'.'.repeat(column - 1)}^`;
    })
    .join('\n');
}

/** cel-go's syntax errors for an expression, in its layout, or undefined when it parses */
export function celSyntaxErrors(expression: string): string | undefined {
  const chars = [...expression];
  const lexer = new Lexer(chars);
  const tokens = lexer.tokens();
  const parser = new Parser(tokens);
  try {
    parser.parse();
  } catch (err) {
    // nesting deeper than the stack allows: cel-go refuses it on its own recursion limit, and
    // the library's error stands
    if (err instanceof RangeError) return undefined;
    throw err;
  }
  const syntax = [...lexer.errors, ...parser.errors];
  if (syntax.length > 0) return displayIssues(expression, syntax);
  if (parser.reserved.length > 0) return displayIssues(expression, parser.reserved);
  return undefined;
}
