// Whether a resource quantity parses, and if not, the error apimachinery's ParseQuantity
// returns (kube-apiserver answers a body with a malformed quantity with that text).

export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const SUFFIX_CHARS = 'eEinumkKMGTP';
const KNOWN_SUFFIXES = new Set(['', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei']);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** the parts apimachinery's parseQuantityString splits a quantity into, or its format error */
function split(str: string): { suffix: string } | 'format' {
  let pos = 0;
  const end = str.length;
  if (str[0] === '-' || str[0] === '+') pos++;
  // leading zeros
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { suffix: '' };
  pos = i;
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    if (i >= end) return { suffix: '' };
    pos = i;
  }
  const suffixStart = pos;
  i = pos;
  while (i < end && SUFFIX_CHARS.includes(str[i])) i++;
  if (i >= end) return { suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  for (i = pos; i < end; i++) if (!isDigit(str[i])) return 'format';
  return { suffix: str.slice(suffixStart) };
}

function suffixKnown(suffix: string): boolean {
  if (KNOWN_SUFFIXES.has(suffix)) return true;
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) return /^[+-]?\d+$/.test(suffix.slice(1));
  return false;
}

/** undefined when `str` is a quantity, else ParseQuantity's error text */
export function quantityError(str: string): string | undefined {
  if (str.length === 0) return QUANTITY_FORMAT_ERROR;
  if (str === '0') return undefined;
  const parts = split(str);
  if (parts === 'format') return QUANTITY_FORMAT_ERROR;
  if (!suffixKnown(parts.suffix)) return QUANTITY_SUFFIX_ERROR;
  // a numeric part without digits ("k", ".") reads as zero
  return undefined;
}
