// Line charts as inline SVG, drawn by hand: the report must open anywhere without fetching
// a plotting library.

export interface ChartSeries {
  name: string;
  /** [x, y] in data units, x ascending */
  points: [number, number][];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'];

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** a round step near range/ticks (1, 2 or 5 times a power of ten) */
function niceStep(range: number, ticks: number): number {
  const raw = range / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const m = raw / power;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * power;
}

function label(n: number): string {
  return Math.abs(n) >= 1000
    ? `${(n / 1000).toFixed(n % 1000 === 0 ? 0 : 1)}k`
    : Number.isInteger(n)
      ? String(n)
      : n.toFixed(n < 1 ? 2 : 1);
}

export function lineChart(title: string, xLabel: string, yLabel: string, series: readonly ChartSeries[]): string {
  const width = 720;
  const height = 260;
  const m = { left: 56, right: 12, top: 28, bottom: 40 };
  const all = series.flatMap((s) => s.points);
  const head = `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(title)}"><text x="${m.left}" y="18" class="title">${escapeHtml(title)}</text>`;
  if (all.length === 0) return `${head}<text x="${width / 2}" y="${height / 2}" text-anchor="middle">no data</text></svg>`;
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  // an all-zero series (no errors) still gets a readable 0..1 axis
  const yTop = Math.max(...all.map((p) => p[1])) || 1;
  const yStep = niceStep(yTop, 4);
  const yMax = Math.ceil(yTop / yStep) * yStep;
  const xStep = niceStep(xMax, 8);
  const px = (x: number): number => m.left + ((width - m.left - m.right) * x) / xMax;
  const py = (y: number): number => height - m.bottom - ((height - m.top - m.bottom) * y) / yMax;
  const parts: string[] = [head];
  for (let y = 0; y <= yMax + yStep / 2; y += yStep) {
    parts.push(
      `<line x1="${m.left}" x2="${width - m.right}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" class="grid"/><text x="${m.left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${label(y)}</text>`,
    );
  }
  for (let x = 0; x <= xMax; x += xStep) {
    parts.push(`<text x="${px(x).toFixed(1)}" y="${height - m.bottom + 16}" text-anchor="middle">${label(x)}</text>`);
  }
  parts.push(`<text x="${(width + m.left) / 2}" y="${height - 6}" text-anchor="middle" class="axis">${escapeHtml(xLabel)}</text>`);
  parts.push(
    `<text transform="translate(14 ${(height - m.bottom + m.top) / 2}) rotate(-90)" text-anchor="middle" class="axis">${escapeHtml(yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const d = s.points.map((p, k) => `${k === 0 ? 'M' : 'L'}${px(p[0]).toFixed(1)} ${py(p[1]).toFixed(1)}`).join('');
    parts.push(
      `<path d="${d}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.6"><title>${escapeHtml(s.name)}</title></path>`,
    );
  });
  parts.push('</svg>');
  const legend = series.map((s, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${escapeHtml(s.name)}</span>`).join('');
  return `<figure>${parts.join('')}<figcaption class="legend">${legend}</figcaption></figure>`;
}
