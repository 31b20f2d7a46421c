// `--service-node-port-range`: "30000-32767", "30000+2767" (base plus offset) or a single
// port, as kube-apiserver's PortRange flag reads it. Dynamic allocation prefers the part of
// the range above an offset (KEP-3668), leaving the bottom for requested ports.

export interface PortRange {
  base: number;
  size: number;
}

const rangeError = (text: string): Error =>
  new Error(`${JSON.stringify(text)} is not a valid port range: must be 'N-M', 'N+M' or 'N' with 0 < N <= M <= 65535`);

export function parsePortRange(text: string): PortRange {
  const s = text.trim();
  const m = /^(\d+)(?:([-+])(\d+))?$/.exec(s);
  if (!m) throw rangeError(text);
  const low = Number(m[1]);
  let high = low;
  if (m[2] === '-') high = Number(m[3]);
  else if (m[2] === '+') high = low + Number(m[3]);
  if (low < 1 || high > 65535 || high < low) throw rangeError(text);
  return { base: low, size: high - low + 1 };
}

export function formatPortRange(r: PortRange): string {
  return `${r.base}-${r.base + r.size - 1}`;
}

export function portRangeContains(r: PortRange, port: number): boolean {
  return Number.isInteger(port) && port >= r.base && port < r.base + r.size;
}

/** min(max(16, size/32), 128) ports at the bottom are kept for requested ports first */
export function portRangeOffset(r: PortRange): number {
  if (r.size <= 16) return 0;
  const offset = Math.floor(r.size / 32);
  if (offset < 16) return 16;
  if (offset > 128) return 128;
  return offset;
}
