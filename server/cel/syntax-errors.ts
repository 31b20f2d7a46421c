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

import { Lexer, NAMES, T, type SyntaxIssue, type Token } from './syntax-tokens.js';

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
