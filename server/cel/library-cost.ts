// The static cost of Kubernetes' CEL library functions and of cel-go's sets extension, as
// kube-apiserver's estimator gives them to cel-go's checker (k8s.io/apiserver
// pkg/cel/library/cost.go): the call's own cost, without its arguments', and the size of its
// result where it is known. cost.ts walks the expression and asks here first.

/** a cost or size range, as cel-go's CostEstimate and SizeEstimate */
export interface Range {
  min: number;
  max: number;
}

/** what the estimate knows of an operand */
export interface EstimateNode {
  /** its checked type's name (`string`, `list<int>`, `Quantity`...) */
  type: string;
  /** its checked type's kind (`primitive`, `list`, `map`, `message`, `dyn`...) */
  kind: string;
  size: Range;
  /** its value, when it is a literal */
  literal?: unknown;
  /** the size of its elements, for a list */
  elementSize(): Range | undefined;
  elementType?: string;
}

export interface LibraryEstimate {
  cost: Range;
  size?: Range;
}

const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const LIST_CREATE = 10;
const STRUCT_CREATE = 40;
const CHECK_COST = 350_000;
/** kube's bound on a named format's size and on its validation regex (pkg/cel/limits.go) */
const MAX_FORMAT_SIZE = 64;
const MAX_NAME_FORMAT_REGEX_SIZE = 128;
const MAX = Number.MAX_SAFE_INTEGER;

const sat = (x: number): number => Math.min(x, MAX);
const ceil = (x: number, f: number): number => (x >= MAX ? MAX : sat(Math.ceil(x * f)));
const scale = (r: Range, f: number): Range => ({ min: ceil(r.min, f), max: ceil(r.max, f) });
const add = (a: Range, b: Range): Range => ({ min: sat(a.min + b.min), max: sat(a.max + b.max) });
const mul = (a: Range, b: Range): Range => ({ min: sat(a.min * b.min), max: sat(a.max * b.max) });
const exactly = (n: number): Range => ({ min: n, max: n });
const unit = (): LibraryEstimate => ({ cost: exactly(1) });

/** a selector's parse plus its requirements, by the selector's length */
export function selectorCost(length: Range): Range {
  const requirements = scale(length, 0.5);
  return add(add(exactly(LIST_CREATE), scale(length, STRING_TRAVERSAL)), scale(requirements, LIST_CREATE + STRUCT_CREATE));
}

/** the kinds whose equality kube charges 1 */
const UNIT_EQUALITY = new Set([
  'Quantity',
  'net.IP',
  'net.CIDR',
  'Semver',
  'Authorizer',
  'PathCheck',
  'GroupCheck',
  'ResourceCheck',
  'Decision',
]);

/** the estimate kube's library gives a call (receiver first for a method), or undefined */
export function libraryEstimate(name: string, target: EstimateNode | undefined, args: EstimateNode[]): LibraryEstimate | undefined {
  const sz = (i: number): Range => args[i]!.size;
  switch (name) {
    case 'check':
      return { cost: exactly(CHECK_COST) };
    case 'serviceAccount':
    case 'path':
    case 'group':
    case 'resource':
    case 'subresource':
    case 'namespace':
    case 'name':
    case 'allowed':
    case 'reason':
    case 'error':
    case 'errored':
      return target && /Authorizer|Check|Decision/.test(target.type) ? unit() : undefined;
    case 'fieldSelector':
    case 'labelSelector':
      return args.length === 1 ? { cost: selectorCost(sz(0)) } : undefined;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
    case 'includes': {
      if (!target) return undefined;
      if (target.kind === 'list') {
        let el = exactly(1);
        if (target.elementType === 'string' || target.elementType === 'bytes')
          el = add(el, scale(target.elementSize() ?? { min: 0, max: MAX }, STRING_TRAVERSAL));
        return { cost: mul(target.size, el) };
      }
      if (name === 'includes') return { cost: target.size };
      return { cost: scale(target.size, STRING_TRAVERSAL) };
    }
    case 'url':
    case 'jsonpatch.escapeKey':
      return args.length === 1 ? { cost: scale(sz(0), STRING_TRAVERSAL), size: sz(0) } : undefined;
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      return target ? { cost: scale(target.size, STRING_TRAVERSAL), size: target.size } : undefined;
    case 'replace':
      return target && args.length >= 2
        ? { cost: scale(target.size, 2 * STRING_TRAVERSAL), size: replacedSize(target.size, sz(0), sz(1)) }
        : undefined;
    case 'split': {
      if (!target) return undefined;
      const limit = args[1]?.literal;
      return {
        cost: scale(target.size, 2 * STRING_TRAVERSAL),
        size: { min: 0, max: typeof limit === 'bigint' ? Number(limit) : target.size.max },
      };
    }
    case 'join': {
      if (!target) return undefined;
      const count = target.size;
      let size = exactly(0);
      const el = target.elementSize();
      if (el) size = mul(count, el);
      if (args.length > 0) size = add(size, mul(sz(0), { min: Math.max(0, count.min - 1), max: Math.max(0, count.max - 1) }));
      return { cost: scale(size, STRING_TRAVERSAL), size };
    }
    case 'find':
    case 'findAll': {
      if (!target || args.length < 1) return undefined;
      const strCost = scale(add(target.size, exactly(1)), STRING_TRAVERSAL);
      return { cost: mul(strCost, scale(sz(0), REGEX_LENGTH)), size: { min: 0, max: target.size.max } };
    }
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      return args.length >= 1 ? { cost: scale(sz(0), STRING_TRAVERSAL) } : undefined;
    case 'ip':
      // cidr.ip() is a method: O(1)
      if (target) return unit();
      return args.length >= 1 ? { cost: scale(sz(0), STRING_TRAVERSAL) } : undefined;
    case 'ip.isCanonical':
      return args.length >= 1 ? { cost: scale(sz(0), 2 * STRING_TRAVERSAL) } : undefined;
    case 'masked':
    case 'prefixLength':
    case 'family':
    case 'isUnspecified':
    case 'isLoopback':
    case 'isLinkLocalMulticast':
    case 'isLinkLocalUnicast':
    case 'isGlobalUnicast':
      return unit();
    case 'containsIP':
    case 'containsCIDR': {
      if (args.length < 1) return undefined;
      // an address is 4 to 16 bytes
      const address: Range = { min: 4, max: 16 };
      let cost = scale(add(address, address), STRING_TRAVERSAL);
      if (name === 'containsCIDR') cost = add(add(cost, scale(address, STRING_TRAVERSAL)), exactly(1));
      if (args[0]!.type === 'string') cost = add(cost, scale(sz(0), STRING_TRAVERSAL));
      return { cost };
    }
    case 'validate':
      return args.length >= 1 ? { cost: scale(scale(sz(0), STRING_TRAVERSAL), MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH) } : undefined;
    case 'format.named':
      return unit();
    case 'sign':
    case 'asInteger':
    case 'isInteger':
    case 'asApproximateFloat':
    case 'isGreaterThan':
    case 'isLessThan':
    case 'compareTo':
    case 'add':
    case 'sub':
    case 'major':
    case 'minor':
    case 'patch':
      return target && target.kind === 'message' ? unit() : undefined;
    case 'getScheme':
    case 'getHostname':
    case 'getHost':
    case 'getPort':
    case 'getEscapedPath':
    case 'getQuery':
      return unit();
    case 'sets.contains':
    case 'sets.intersects':
      return args.length === 2 ? { cost: add(mul(sz(0), sz(1)), exactly(1)) } : undefined;
    case 'sets.equivalent':
      return args.length === 2 ? { cost: add(scale(mul(sz(0), sz(1)), 2), exactly(1)) } : undefined;
    case '_==_': {
      const [l, r] = args;
      if (!l || !r || l.type !== r.type) return undefined;
      if (UNIT_EQUALITY.has(l.type)) return unit();
      if (l.type === 'Format') return { cost: scale({ min: 1, max: MAX_FORMAT_SIZE }, STRING_TRAVERSAL) };
      // kube reads the right side's size twice (the union of it with itself)
      if (l.type === 'net.URL') return { cost: scale({ min: 1, max: r.size.max === MAX ? 1 : r.size.max }, STRING_TRAVERSAL) };
      return undefined;
    }
    default:
      return undefined;
  }
}

/** the size of `s.replace(old, new)`: every occurrence of `old` (or every gap when it may be
 *  empty) replaced by `new` */
function replacedSize(s: Range, from: Range, to: Range): Range {
  const count = { min: 0, max: 0 };
  const retained = { min: 0, max: 0 };
  if (from.min === 0) {
    count.max = s.max < MAX ? s.max + 1 : s.max;
    retained.max = s.max;
  } else if (to.max <= from.min) {
    retained.max = s.max;
  } else {
    count.max = Math.ceil(s.max / from.min);
  }
  if (from.max === 0) {
    count.min = s.min < MAX ? s.min + 1 : s.min;
    retained.min = s.min;
  } else if (from.max <= to.min) {
    retained.min = s.min;
  } else {
    count.min = Math.ceil(s.min / from.max);
  }
  return add(mul(count, to), retained);
}
