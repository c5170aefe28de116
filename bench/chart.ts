import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hasCommand } from './peers.js';

// The chart of docs/BENCHMARKS.md: p50 per query and engine as horizontal bars on a log scale, drawn as SVG by
// hand (no chart library) and turned into PNG by rsvg-convert (Debian: librsvg2-bin) when it is installed.

export interface ChartSeries {
  label: string;
  color: string;
  /** p50 in ms per query, in the order of `queries`; NaN where the engine has no figure. */
  values: number[];
}

const BAR = 9;
const GAP = 14;
const LEFT = 250;
const RIGHT = 40;
const TOP = 70;
const WIDTH = 1100;

export function chartSvg(title: string, queries: string[], series: ChartSeries[]): string {
  const all = series.flatMap((s) => s.values).filter((v) => Number.isFinite(v) && v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...all)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...all)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const x = (ms: number) => LEFT + ((Math.log10(ms) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotWidth;
  const groupHeight = series.length * BAR + GAP;
  const height = TOP + queries.length * groupHeight + 50;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${LEFT}" y="24" font-size="15" font-weight="bold">${escape(title)}</text>`,
  ];
  series.forEach((s, i) => {
    const lx = LEFT + i * 170;
    parts.push(
      `<rect x="${lx}" y="36" width="12" height="12" fill="${s.color}"/><text x="${lx + 18}" y="46">${escape(s.label)}</text>`,
    );
  });
  for (let tick = lo; tick <= hi; tick *= 10) {
    for (const m of [1, 2, 5]) {
      const v = tick * m;
      if (v > hi) break;
      const tx = x(v);
      parts.push(
        `<line x1="${tx}" y1="${TOP - 6}" x2="${tx}" y2="${height - 44}" stroke="${m === 1 ? '#bbb' : '#e6e6e6'}"/>`,
      );
      if (m === 1 || m === 5)
        parts.push(`<text x="${tx}" y="${height - 28}" text-anchor="middle" fill="#444">${formatMs(v)}</text>`);
    }
  }
  parts.push(
    `<text x="${LEFT + plotWidth / 2}" y="${height - 8}" text-anchor="middle" fill="#444">p50 latency (log scale)</text>`,
  );
  queries.forEach((q, qi) => {
    const gy = TOP + qi * groupHeight;
    parts.push(`<text x="${LEFT - 8}" y="${gy + (series.length * BAR) / 2 + 4}" text-anchor="end">${escape(q)}</text>`);
    series.forEach((s, si) => {
      const v = s.values[qi]!;
      const y = gy + si * BAR;
      if (!Number.isFinite(v) || v <= 0) return;
      parts.push(
        `<rect x="${LEFT}" y="${y}" width="${Math.max(1, x(v) - LEFT)}" height="${BAR - 1}" fill="${s.color}"/>`,
      );
      parts.push(`<text x="${x(v) + 4}" y="${y + BAR - 1}" font-size="9" fill="#333">${formatMs(v)}</text>`);
    });
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** Writes the SVG next to `pngFile` and converts it; returns why there is no PNG, or null. */
export function writeChart(svg: string, svgFile: string, pngFile: string): string | null {
  writeFileSync(svgFile, svg);
  if (!hasCommand('rsvg-convert'))
    return `no PNG: rsvg-convert is not installed (apt-get install librsvg2-bin); the SVG is ${svgFile}`;
  const result = spawnSync('rsvg-convert', ['--format', 'png', '--output', pngFile, svgFile], { encoding: 'utf8' });
  return result.status === 0 ? null : `rsvg-convert failed: ${result.stderr.trim()}`;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms >= 1000) return `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)} s`;
  return `${ms >= 100 ? Math.round(ms) : ms >= 10 ? ms.toFixed(0) : ms.toFixed(1)} ms`;
}

function escape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
