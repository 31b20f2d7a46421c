// The `is<Type>(string)` functions of Kubernetes' CEL libraries: true when the matching
// constructor accepts the string.

/** true when `parse` returns, false when it throws */
export function parses(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}
