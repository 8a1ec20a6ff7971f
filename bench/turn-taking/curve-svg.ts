/** The delay-vs-false-cut-off curve across turn_end_threshold, one line per system, as SVG. */
export interface CurveSeries {
  name: string;
  colour: string;
  points: Array<{ threshold: number; falseCutPct: number; p50Ms: number }>;
}

export function curveSvg(series: CurveSeries[], title: string): string {
  const w = 640;
  const h = 420;
  const m = { l: 60, r: 20, t: 40, b: 50 };
  const maxX = Math.max(10, ...series.flatMap((s) => s.points.map((p) => p.falseCutPct))) * 1.05;
  const maxY = Math.max(400, ...series.flatMap((s) => s.points.map((p) => p.p50Ms))) * 1.05;
  const x = (v: number): number => m.l + (v / maxX) * (w - m.l - m.r);
  const y = (v: number): number => h - m.b - (v / maxY) * (h - m.t - m.b);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="11">`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    `<text x="${w / 2}" y="20" text-anchor="middle" font-size="13">${title}</text>`,
    `<line x1="${m.l}" y1="${h - m.b}" x2="${w - m.r}" y2="${h - m.b}" stroke="black"/>`,
    `<line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${h - m.b}" stroke="black"/>`,
    `<text x="${w / 2}" y="${h - 12}" text-anchor="middle">false cut-offs on pauses ≤ 800 ms (%)</text>`,
    `<text x="16" y="${h / 2}" text-anchor="middle" transform="rotate(-90 16 ${h / 2})">end-of-turn delay p50 (ms)</text>`,
    // The goal: p50 ≤ 300 ms at ≤ 5 % false cut-offs.
    `<rect x="${m.l}" y="${y(300)}" width="${x(5) - m.l}" height="${h - m.b - y(300)}" fill="#e6f4e6"/>`,
  ];
  for (let v = 0; v <= maxX; v += maxX > 40 ? 10 : 5) parts.push(`<text x="${x(v)}" y="${h - m.b + 14}" text-anchor="middle">${v}</text>`);
  for (let v = 0; v <= maxY; v += 200) parts.push(`<text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
  series.forEach((s, i) => {
    const pts = s.points.map((p) => `${x(p.falseCutPct).toFixed(1)},${y(p.p50Ms).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${pts}" fill="none" stroke="${s.colour}" stroke-width="2"/>`);
    for (const p of s.points) {
      parts.push(`<circle cx="${x(p.falseCutPct).toFixed(1)}" cy="${y(p.p50Ms).toFixed(1)}" r="3" fill="${s.colour}"><title>${s.name} threshold ${p.threshold}: ${p.p50Ms} ms, ${p.falseCutPct} %</title></circle>`);
      parts.push(`<text x="${(x(p.falseCutPct) + 5).toFixed(1)}" y="${(y(p.p50Ms) - 4).toFixed(1)}" fill="${s.colour}" font-size="9">${p.threshold}</text>`);
    }
    parts.push(`<rect x="${w - 230}" y="${m.t + 8 + i * 16}" width="10" height="10" fill="${s.colour}"/><text x="${w - 215}" y="${m.t + 17 + i * 16}">${s.name}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
