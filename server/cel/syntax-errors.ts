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

import { issueAtOffset, issueLayout } from './issue-layout.js';
import { Lexer, NAMES, T, type SyntaxIssue, type Token } from './syntax-tokens.js';
import { CEL_RESERVED_IDENTIFIERS } from './reserved-words.js';

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

function display(t: Token): string {
  if (t.type === T.EOF) return "'<EOF>'";
  return `'${t.text.replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
}

function expecting(s: TokenSet): string {
  const sorted = [...s].sort((a, b) => a - b);
  if (sorted.length === 1) return NAMES[sorted[0]!]!;
  return `{${sorted.map((t) => NAMES[t]).join(', ')}}`;
}

/** cel-go's parser limits (parser.NewParser's defaults; kube-apiserver sets none of them) */
export interface ParserLimits {
  /** the deepest nesting of one grammar rule while parsing, and of the parse tree's operator,
   *  selection, call and index nodes while it is read */
  maxRecursionDepth: number;
  /** error recoveries before the parser gives up */
  errorRecoveryLimit: number;
  /** tokens one recovery may skip before the parser gives up */
  errorRecoveryTokenLookahead: number;
  /** syntax errors reported before the parser gives up (the next one says so instead) */
  errorReportingLimit: number;
}

export const CEL_GO_PARSER_LIMITS: ParserLimits = {
  maxRecursionDepth: 250,
  errorRecoveryLimit: 30,
  errorRecoveryTokenLookahead: 256,
  errorReportingLimit: 100,
};

/** cel-go records at most this many issues of an expression; the display counts the rest */
const MAX_ISSUES_RECORDED = 100;

/** cel-go refuses longer expressions before it parses them */
const EXPRESSION_SIZE_CODE_POINT_LIMIT = 100_000;

/** parsing stops: a limit was reached (its error is already recorded) */
class ParseAbort extends Error {}

/** the grammar rules whose nesting cel-go counts (one counter per rule) */
type Rule =
  | 'expr'
  | 'conditionalOr'
  | 'conditionalAnd'
  | 'relation'
  | 'calc'
  | 'unary'
  | 'member'
  | 'primary'
  | 'exprList'
  | 'listInit'
  | 'optExpr'
  | 'mapInitializerList'
  | 'fieldInitializerList';

/** the rule one level of operators reads its operands with; called on the parser, not through a
 *  closure, so that a nesting level costs no extra stack frame */
type Operand = (this: Parser, follow: TokenSet) => number;

class Parser {
  readonly errors: SyntaxIssue[] = [];
  readonly reserved: SyntaxIssue[] = [];
  /** errors cel-go reports without a location */
  readonly unlocated: string[] = [];
  private p = 0;
  private recovering = false;
  private lastErrorIndex = -1;
  private attempts = 0;
  private readonly depths = new Map<Rule, number>();

  constructor(
    private readonly tokens: Token[],
    private readonly limits: ParserLimits,
  ) {}

  private la(k = 1): Token {
    return this.tokens[Math.min(this.p + k - 1, this.tokens.length - 1)]!;
  }

  /** where the parser is (an offset in code points) */
  get position(): number {
    return this.la().start;
  }

  private consume(): void {
    if (this.la().type !== T.EOF) this.p++;
  }

  private report(at: Token, message: string): void {
    if (this.recovering) return;
    this.recovering = true;
    this.errors.push({ at: at.start, message: `Syntax error: ${message}` });
  }

  /** each recovery (in a rule, or of a token a rule requires) counts against cel-go's limit */
  private checkAttempts(): void {
    if (this.attempts === this.limits.errorRecoveryLimit) {
      this.attempts++;
      this.errors.push({
        at: this.la().start,
        message: `Syntax error: error recovery attempt limit exceeded: ${this.limits.errorRecoveryLimit}`,
      });
      throw new ParseAbort();
    }
    this.attempts++;
  }

  /** one more level of a rule (ANTLR's rule entry, as cel-go's listener counts it) */
  private enter(rule: Rule): void {
    const depth = (this.depths.get(rule) ?? 0) + 1;
    this.depths.set(rule, depth);
    if (depth > this.limits.maxRecursionDepth) {
      this.unlocated.push(`expression recursion limit exceeded: ${this.limits.maxRecursionDepth}`);
      throw new ParseAbort();
    }
  }

  /** one level deeper in `rule`; returns the depth to restore when the rule is left */
  private descend(rule: Rule): number {
    const before = this.depths.get(rule) ?? 0;
    this.enter(rule);
    return before;
  }

  /** A rule's error: skips to a token that may follow it; the rule read nothing (height 0).
   *  Rules catch inline rather than through a callback so that each nesting level of the
   *  grammar costs one stack frame per rule: cel-go's 250 levels must fit node's stack. */
  private recovered(err: unknown, follow: TokenSet): number {
    if (!(err instanceof RecognitionError)) throw err;
    this.checkAttempts();
    this.recover(follow);
    return 0;
  }

  /** a token the grammar requires; `after`: what may follow it here */
  private match(type: T, after: TokenSet): void {
    const t = this.la();
    if (t.type === type) {
      this.consume();
      this.recovering = false;
      return;
    }
    this.checkAttempts();
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

  /** ANTLR's recovery in a rule: skips to a token that may follow it (one token at least when
   *  the last recovery stopped here too), each skipped token counted against cel-go's limit */
  private recover(follow: TokenSet): void {
    let skipped = 0;
    const skip = (): void => {
      if (skipped >= this.limits.errorRecoveryTokenLookahead) {
        this.unlocated.push(`error recovery token lookahead limit exceeded: ${this.limits.errorRecoveryTokenLookahead}`);
        throw new ParseAbort();
      }
      skipped++;
      this.consume();
    };
    if (this.lastErrorIndex === this.p) skip();
    this.lastErrorIndex = this.p;
    while (this.la().type !== T.EOF && !follow.has(this.la().type)) skip();
  }

  /** Parses the expression. Returns the height of its parse tree as cel-go's visitor counts it:
   *  conditionals, relations, arithmetic, selections, calls on a receiver and indexes */
  parse(): number {
    const follow = set(T.EOF);
    const height = this.expr(follow);
    const t = this.la();
    if (t.type === T.EOF) return height;
    this.checkAttempts();
    if (this.la(2).type === T.EOF) this.report(t, `extraneous input ${display(t)} expecting <EOF>`);
    else {
      this.report(t, `mismatched input ${display(t)} expecting <EOF>`);
      this.checkAttempts();
      this.recover(set(T.EOF));
    }
    return height;
  }

  private expr(follow: TokenSet): number {
    const outer = this.descend('expr');
    try {
      const condition = this.conditionalOr(union(follow, set(T.QUESTIONMARK)));
      if (this.la().type !== T.QUESTIONMARK) return condition;
      this.match(T.QUESTIONMARK, EXPR_START);
      const ifTrue = this.conditionalOr(union(follow, set(T.COLON)));
      this.match(T.COLON, EXPR_START);
      const ifFalse = this.expr(follow);
      return 1 + Math.max(condition, ifTrue, ifFalse);
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('expr', outer);
    }
  }

  /** `operand (op operand)*`, the operators joining flat (cel-go balances && and ||) */
  private flat(rule: Rule, follow: TokenSet, op: T, operand: Operand): number {
    const outer = this.descend(rule);
    try {
      const f = union(follow, set(op));
      let height = operand.call(this, f);
      while (this.la().type === op) {
        this.match(op, EXPR_START);
        height = Math.max(height, operand.call(this, f));
      }
      return height;
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set(rule, outer);
    }
  }

  private conditionalOr(follow: TokenSet): number {
    return this.flat('conditionalOr', follow, T.LOGICAL_OR, this.conditionalAnd);
  }

  private conditionalAnd(follow: TokenSet): number {
    return this.flat('conditionalAnd', follow, T.LOGICAL_AND, this.relation);
  }

  /**
   * A left-recursive rule of operators, as ANTLR parses it by precedence: the rule is one level
   * deep however many operators follow (ANTLR leaves and enters it again for each), and each
   * right operand is read one level further down. `levels`: the operators by precedence,
   * loosest first. The tree nests to the left: each operator is a node above what came before.
   */
  private climb(rule: Rule, follow: TokenSet, levels: readonly TokenSet[], operand: Operand, minLevel = 0): number {
    const outer = this.descend(rule);
    try {
      const all = union(...levels);
      const f = union(follow, all);
      let height = operand.call(this, f);
      for (;;) {
        const level = levels.findIndex((ops) => ops.has(this.la().type));
        if (level < minLevel) return height;
        this.match(this.la().type, EXPR_START);
        const right = this.climb(rule, f, levels, operand, level + 1);
        height = 1 + Math.max(height, right);
      }
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set(rule, outer);
    }
  }

  private relation(follow: TokenSet): number {
    return this.climb('relation', follow, [RELATIONS], this.calc);
  }

  private calc(follow: TokenSet): number {
    return this.climb('calc', follow, [SUMS, PRODUCTS], this.unary);
  }

  private unary(follow: TokenSet): number {
    const outer = this.descend('unary');
    try {
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
      return this.member(follow);
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('unary', outer);
    }
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

  /** a primary and its selections, calls and indexes (one level of the rule, however many) */
  private member(follow: TokenSet): number {
    const outer = this.descend('member');
    try {
      const f = union(follow, set(T.DOT, T.LBRACKET));
      let height = this.primary(f);
      for (;;) {
        const t = this.la();
        if (t.type === T.DOT) {
          const next = this.la(2);
          const afterOpt = next.type === T.QUESTIONMARK ? this.la(3) : next;
          if (next.type === T.IDENTIFIER && this.la(3).type === T.LPAREN) {
            this.consume();
            this.consume();
            height = 1 + Math.max(height, this.call(f));
            continue;
          }
          if (afterOpt.type === T.IDENTIFIER || afterOpt.type === T.ESC_IDENTIFIER) {
            this.consume();
            if (next.type === T.QUESTIONMARK) this.consume();
            this.consume();
            this.recovering = false;
            height += 1;
            continue;
          }
          // neither a selection nor a method call: no alternative of the rule fits
          const stop = next.type === T.QUESTIONMARK ? afterOpt : next;
          const text = this.tokens
            .slice(this.p, this.tokens.indexOf(stop) + (stop.type === T.EOF ? 0 : 1))
            .map((x) => x.text)
            .join('');
          this.report(stop, `no viable alternative at input '${text}'`);
          throw new RecognitionError();
        }
        if (t.type === T.LBRACKET) {
          this.consume();
          if (this.la().type === T.QUESTIONMARK) this.consume();
          const index = this.expr(union(f, set(T.RPRACKET)));
          this.match(T.RPRACKET, f);
          height = 1 + Math.max(height, index);
          continue;
        }
        return height;
      }
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('member', outer);
    }
  }

  /** `(args?)` after a function's name: the height of its arguments */
  private call(follow: TokenSet): number {
    this.match(T.LPAREN, EXPR_START);
    this.sync(union(EXPR_START, set(T.RPAREN)));
    const height = this.la().type !== T.RPAREN ? this.exprList(union(follow, set(T.RPAREN))) : 0;
    this.match(T.RPAREN, follow);
    return height;
  }

  private exprList(follow: TokenSet): number {
    const outer = this.descend('exprList');
    try {
      const f = union(follow, set(T.COMMA));
      let height = this.expr(f);
      while (this.la().type === T.COMMA) {
        this.match(T.COMMA, EXPR_START);
        height = Math.max(height, this.expr(f));
      }
      return height;
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('exprList', outer);
    }
  }

  private primary(follow: TokenSet): number {
    const outer = this.descend('primary');
    try {
      return this.primaryBody(follow);
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('primary', outer);
    }
  }

  private primaryBody(follow: TokenSet): number {
    const t = this.la();
    switch (t.type) {
      case T.DOT:
      case T.IDENTIFIER: {
        if (t.type === T.DOT) this.consume();
        const id = this.la();
        if (id.type !== T.IDENTIFIER) {
          this.match(T.IDENTIFIER, follow);
          return 0;
        }
        // a message name: IDENTIFIER ('.' IDENTIFIER)* '{'
        let k = 2;
        while (this.la(k).type === T.DOT && this.la(k + 1).type === T.IDENTIFIER) k += 2;
        if (this.la(k).type === T.LBRACE) {
          for (let j = 1; j < k; j++) this.consume();
          this.recovering = false;
          return this.fields(follow);
        }
        if (CEL_RESERVED_IDENTIFIERS.has(id.text)) this.reserved.push({ at: id.start, message: `reserved identifier: ${id.text}` });
        this.consume();
        this.recovering = false;
        return this.la().type === T.LPAREN ? this.call(follow) : 0;
      }
      case T.LPAREN: {
        this.consume();
        const height = this.expr(union(follow, set(T.RPAREN)));
        this.match(T.RPAREN, follow);
        return height;
      }
      case T.LBRACKET: {
        this.consume();
        this.sync(union(EXPR_START, set(T.QUESTIONMARK, T.COMMA, T.RPRACKET)));
        let height = 0;
        if (this.la().type !== T.RPRACKET && this.la().type !== T.COMMA) {
          const f = union(follow, set(T.COMMA, T.RPRACKET));
          height = this.listInit(f);
        }
        if (this.la().type === T.COMMA) this.consume();
        this.match(T.RPRACKET, follow);
        return height;
      }
      case T.LBRACE: {
        this.consume();
        this.sync(union(EXPR_START, set(T.QUESTIONMARK, T.COMMA, T.RBRACE)));
        let height = 0;
        if (this.la().type !== T.RBRACE && this.la().type !== T.COMMA) {
          const f = union(follow, set(T.COMMA, T.RBRACE));
          height = this.mapInitializerList(f);
        }
        if (this.la().type === T.COMMA) this.consume();
        this.match(T.RBRACE, follow);
        return height;
      }
      case T.MINUS:
        if (this.isNumber(this.la(2).type)) {
          this.consume();
          this.consume();
          this.recovering = false;
          return 0;
        }
        this.report(this.la(2), `no viable alternative at input '${t.text}${this.la(2).type === T.EOF ? '' : this.la(2).text}'`);
        throw new RecognitionError();
      default:
        if (LITERALS.includes(t.type)) {
          this.consume();
          this.recovering = false;
          return 0;
        }
        // a stray token before a primary is dropped (then the primary read), else reported
        this.sync(PRIMARY_START);
        return this.primaryBody(follow);
    }
  }

  private listInit(follow: TokenSet): number {
    const outer = this.descend('listInit');
    try {
      let height = this.optExpr(follow);
      while (this.la().type === T.COMMA && this.la(2).type !== T.RPRACKET) {
        this.match(T.COMMA, EXPR_START);
        height = Math.max(height, this.optExpr(follow));
      }
      return height;
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('listInit', outer);
    }
  }

  private mapInitializerList(follow: TokenSet): number {
    const outer = this.descend('mapInitializerList');
    try {
      let height = this.mapEntry(follow);
      while (this.la().type === T.COMMA && this.la(2).type !== T.RBRACE) {
        this.match(T.COMMA, EXPR_START);
        height = Math.max(height, this.mapEntry(follow));
      }
      return height;
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('mapInitializerList', outer);
    }
  }

  private mapEntry(follow: TokenSet): number {
    const key = this.optExpr(union(follow, set(T.COLON)));
    this.match(T.COLON, EXPR_START);
    return Math.max(key, this.expr(follow));
  }

  private optExpr(follow: TokenSet): number {
    const outer = this.descend('optExpr');
    try {
      if (this.la().type === T.QUESTIONMARK) this.consume();
      return this.expr(follow);
    } finally {
      this.depths.set('optExpr', outer);
    }
  }

  /** `{field: value, ...}` of a message construction */
  private fields(follow: TokenSet): number {
    this.match(T.LBRACE, set(T.RBRACE));
    const fieldStart = set(T.RBRACE, T.COMMA, T.QUESTIONMARK, T.IDENTIFIER, T.ESC_IDENTIFIER);
    this.sync(fieldStart);
    const f = union(follow, set(T.COMMA, T.RBRACE));
    const height = this.la().type !== T.RBRACE && this.la().type !== T.COMMA ? this.fieldInitializerList(f) : 0;
    if (this.la().type === T.COMMA) this.consume();
    this.match(T.RBRACE, follow);
    return height;
  }

  private fieldInitializerList(follow: TokenSet): number {
    const outer = this.descend('fieldInitializerList');
    try {
      let height = this.field(follow);
      while (this.la().type === T.COMMA && this.la(2).type !== T.RBRACE) {
        this.match(T.COMMA, set(T.QUESTIONMARK, T.IDENTIFIER, T.ESC_IDENTIFIER));
        height = Math.max(height, this.field(follow));
      }
      return height;
    } catch (err) {
      return this.recovered(err, follow);
    } finally {
      this.depths.set('fieldInitializerList', outer);
    }
  }

  /** `name: value` in a message construction */
  private field(follow: TokenSet): number {
    if (this.la().type === T.QUESTIONMARK) this.consume();
    const id = this.la();
    if (id.type === T.IDENTIFIER || id.type === T.ESC_IDENTIFIER) {
      this.consume();
      this.recovering = false;
    } else this.match(T.IDENTIFIER, set(T.COLON));
    this.match(T.COLON, EXPR_START);
    return this.expr(follow);
  }
}

/** cel-go's display of issues: those without a location first, then each with its source line
 *  and a caret, in source order; `truncated`: issues recorded beyond cel-go's limit, counted
 *  on a last line */
export function displayIssues(
  expression: string,
  issues: readonly SyntaxIssue[],
  unlocated: readonly string[] = [],
  truncated = 0,
): string {
  const chars = [...expression];
  return [
    ...unlocated.map((message) => issueLayout(message, -1, -1)),
    ...[...issues].sort((a, b) => a.at - b.at).map((issue) => issueAtOffset(chars, issue.at, issue.message)),
    ...(truncated > 0 ? [`${truncated} more errors were truncated`] : []),
  ].join('\n');
}

/** The syntax errors in the order cel-go hears of them. ANTLR's lexer runs as the parser asks
 *  for tokens, and the parser looks one token past the one it reports (to try deleting it)
 *  before it does: so a parser error comes after the lexer errors before the token that
 *  follows the one it names. */
function inReportOrder(tokens: readonly Token[], lexed: readonly SyntaxIssue[], parsed: readonly SyntaxIssue[]): SyntaxIssue[] {
  const pending = [...lexed].sort((a, b) => a.at - b.at);
  const out: SyntaxIssue[] = [];
  let heard = 0;
  for (const issue of parsed) {
    const named = tokens.findIndex((t) => t.start >= issue.at);
    const next = named < 0 ? Infinity : (tokens[named + 1]?.start ?? Infinity);
    while (heard < pending.length && pending[heard]!.at < next) out.push(pending[heard++]!);
    out.push(issue);
  }
  return [...out, ...pending.slice(heard)];
}

/** the deepest nesting of brackets, parentheses and braces */
function bracketDepth(tokens: readonly Token[]): number {
  let depth = 0;
  let deepest = 0;
  for (const t of tokens) {
    if (t.type === T.LPAREN || t.type === T.LBRACKET || t.type === T.LBRACE) deepest = Math.max(deepest, ++depth);
    else if (t.type === T.RPAREN || t.type === T.RPRACKET || t.type === T.RBRACE) depth--;
  }
  return deepest;
}

interface ParseOutcome {
  lexer: Lexer;
  tokens: Token[];
  parser: Parser;
  /** the tree's height as cel-go's visitor counts it; undefined when the parse stopped */
  height?: number;
  /** the parse stopped at one of cel-go's limits */
  stopped: boolean;
  /** errors cel-go reports without a location (its limits) */
  unlocated: string[];
}

function parseWithLimits(expression: string, limits: ParserLimits): ParseOutcome {
  const chars = [...expression];
  const lexer = new Lexer(chars);
  const tokens = lexer.tokens();
  const parser = new Parser(tokens, limits);
  if (chars.length > EXPRESSION_SIZE_CODE_POINT_LIMIT) {
    return {
      lexer,
      tokens,
      parser,
      stopped: true,
      unlocated: [`expression code point size exceeds limit: size: ${chars.length}, limit ${EXPRESSION_SIZE_CODE_POINT_LIMIT}`],
    };
  }
  try {
    const height = parser.parse();
    // cel-go's reading of the parse tree has its own limit on how deep the tree nests
    return {
      lexer,
      tokens,
      parser,
      height,
      stopped: false,
      unlocated: height > limits.maxRecursionDepth ? ['max recursion depth exceeded'] : [],
    };
  } catch (err) {
    if (err instanceof RangeError) {
      // nesting deeper than the stack left to this parser allows (cel-go's limit fits node's
      // stack with room to spare; a caller deep in its own stack may still get here): each
      // bracket, parenthesis or brace nests an expression in cel-go's grammar (one more than the
      // top one), so cel-go's recursion limit decides; within it, the expression is left to the
      // library
      const tooDeep = bracketDepth(tokens) + 1 > limits.maxRecursionDepth;
      return {
        lexer,
        tokens,
        parser,
        stopped: true,
        unlocated: tooDeep ? [`expression recursion limit exceeded: ${limits.maxRecursionDepth}`] : [],
      };
    }
    if (!(err instanceof ParseAbort)) throw err;
    return { lexer, tokens, parser, stopped: true, unlocated: parser.unlocated };
  }
}

/** cel-go's syntax errors for an expression, in its layout, or undefined when it parses;
 *  `limits`: cel-go's parser limits (its defaults, which kube keeps, unless a test sets others) */
export function celSyntaxErrors(expression: string, limits: ParserLimits = CEL_GO_PARSER_LIMITS): string | undefined {
  const { lexer, tokens, parser, stopped, unlocated } = parseWithLimits(expression, limits);
  if (stopped && parser.errors.length === 0 && unlocated.length === 0) return undefined;
  // a parse stopped at a limit has reported what it read up to there (ANTLR reads tokens as the
  // parser asks for them)
  const lexed = stopped ? lexer.errors.filter((e) => e.at <= parser.position) : lexer.errors;
  let syntax = inReportOrder(tokens, lexed, parser.errors);
  let internal = unlocated;
  if (syntax.length > limits.errorReportingLimit) {
    // the error past the limit is reported as the limit, and the parse ends there
    const over = syntax[limits.errorReportingLimit]!;
    syntax = [
      ...syntax.slice(0, limits.errorReportingLimit),
      { at: over.at, message: `Syntax error: More than ${limits.errorReportingLimit} syntax errors` },
    ];
    internal = [];
  }
  if (syntax.length > 0 || internal.length > 0) {
    // internal errors are recorded last (the parse stopped, or its tree was read, after the
    // syntax errors); what is past cel-go's record is only counted
    const recorded = [...syntax.map((issue) => ({ issue })), ...internal.map((message) => ({ message }))];
    const kept = recorded.slice(0, MAX_ISSUES_RECORDED);
    return displayIssues(
      expression,
      kept.flatMap((r) => ('issue' in r ? [r.issue] : [])),
      kept.flatMap((r) => ('message' in r ? [r.message] : [])),
      recorded.length - kept.length,
    );
  }
  if (parser.reserved.length > 0) return displayIssues(expression, parser.reserved);
  return undefined;
}

/** the error of a parser limit cel-go reaches on an expression (size, recursion, tree depth) */
export function celParserLimitError(expression: string, limits: ParserLimits = CEL_GO_PARSER_LIMITS): string | undefined {
  return parseWithLimits(expression, limits).unlocated[0];
}
