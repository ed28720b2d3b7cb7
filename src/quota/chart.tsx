// The storage overview's history chart, drawn on the server as SVG (no chart library, no script):
// one line per series over the sampled days, a light grid with the largest value and the dates at
// either end. Screen readers get the title and a one-sentence summary.
import type { VNode } from 'preact';
import { formatBytes } from '../web/components.js';

export interface ChartSeries {
  key: string;
  label: string;
  /** A class of the stylesheet giving the line its colour (chart-total, chart-git, ...). */
  class: string;
}

export interface ChartPoint {
  /** Days since 1970-01-01 (UTC). */
  day: number;
  values: Record<string, number>;
}

const W = 720;
const H = 220;
const PAD = { left: 8, right: 8, top: 24, bottom: 24 };

const dateOf = (day: number) => new Date(day * 86_400_000).toISOString().slice(0, 10);

/** A round upper bound for the axis: 1, 2 or 5 times a power of 1024-ish bytes, at least `max`. */
export function axisMax(max: number): number {
  if (max <= 0) return 1024;
  const unit = 1024 ** Math.floor(Math.log(max) / Math.log(1024));
  for (const step of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]) {
    if (step * unit >= max) return step * unit;
  }
  return 1024 * unit;
}

/** The points of one series as an SVG path (gaps between samples drawn straight). */
export function linePath(
  points: ChartPoint[],
  key: string,
  first: number,
  last: number,
  top: number,
): string {
  const spanX = Math.max(1, last - first);
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  return points
    .map((p, i) => {
      const x = PAD.left + ((p.day - first) / spanX) * innerW;
      const y = PAD.top + innerH - ((p.values[key] ?? 0) / top) * innerH;
      return `${i === 0 ? 'M' : 'L'}${x.toFixed(1)} ${y.toFixed(1)}`;
    })
    .join(' ');
}

export function UsageChart(props: { title: string; points: ChartPoint[]; series: ChartSeries[] }): VNode {
  const { points, series } = props;
  if (points.length === 0) {
    return <p class="empty">No history yet: a sample of the usage is taken once a day.</p>;
  }
  const first = points[0]!.day;
  const last = points[points.length - 1]!.day;
  const max = Math.max(...points.flatMap((p) => series.map((s) => p.values[s.key] ?? 0)));
  const top = axisMax(max);
  const latest = points[points.length - 1]!;
  const summary = `${points.length} daily samples from ${dateOf(first)} to ${dateOf(last)}; latest: ${series
    .map((s) => `${s.label} ${formatBytes(latest.values[s.key] ?? 0)}`)
    .join(', ')}.`;
  const innerH = H - PAD.top - PAD.bottom;
  return (
    <figure class="usage-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">{props.title}</title>
        <desc id="chart-desc">{summary}</desc>
        {[0, 0.25, 0.5, 0.75, 1].map((f) => {
          const y = PAD.top + innerH - f * innerH;
          return <line class="chart-grid" x1={PAD.left} x2={W - PAD.right} y1={y} y2={y} />;
        })}
        {series.map((s) => (
          <path class={`chart-line ${s.class}`} d={linePath(points, s.key, first, last, top)} />
        ))}
        <text class="chart-label" x={PAD.left} y={PAD.top - 8}>
          {formatBytes(top)}
        </text>
        <text class="chart-label" x={PAD.left} y={H - 6}>
          {dateOf(first)}
        </text>
        <text class="chart-label" x={W - PAD.right} y={H - 6} text-anchor="end">
          {dateOf(last)}
        </text>
      </svg>
      <figcaption>
        {series.map((s) => (
          <span class="chart-key">
            <svg width="14" height="4" aria-hidden="true">
              <line class={`chart-line ${s.class}`} x1="0" x2="14" y1="2" y2="2" />
            </svg>{' '}
            {s.label}: {formatBytes(latest.values[s.key] ?? 0)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
