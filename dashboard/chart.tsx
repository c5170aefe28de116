import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Annotation } from './api';

// Visitors and pageviews per day over the range (uPlot: small, fast on thousands of points), with each annotation
// drawn as a dashed line and its title in a row of labels above the plot. A range ending today ends in a day not
// over yet: its segment is dashed and labelled "so far", as Plausible draws it, instead of a fall.

export interface DailyPoint {
  /** The day (`YYYY-MM-DD`) or hour (`YYYY-MM-DD HH:00:00`) of the point. */
  date: string;
  visitors: number;
  pageviews: number;
}

const seconds = (at: string) => Date.parse(at.length === 10 ? `${at}T00:00:00Z` : `${at.replace(' ', 'T')}Z`) / 1000;

/** Label rows above the plot; a title that fits in none is left to the annotations list below the chart. */
const LABEL_ROWS = 3;
const LABEL_HEIGHT = 16;
const LABEL_CHARS = 30;

/** A label's text and its place: `left` in CSS pixels of the plot area, `row` from the top. */
export interface PlacedLabel {
  text: string;
  title: string;
  left: number;
  row: number;
}

/**
 * Places annotation titles left to right without overlap: each right of its line (left of it near the right edge),
 * in the first row where it clears the label before it; none where no row has room.
 */
export function placeLabels(
  marks: { x: number; title: string }[],
  width: number,
  measure: (text: string) => number,
): PlacedLabel[] {
  const rowsEnd: number[] = [];
  const placed: PlacedLabel[] = [];
  for (const mark of [...marks].sort((a, b) => a.x - b.x)) {
    if (mark.x < 0 || mark.x > width) continue;
    const text = mark.title.length > LABEL_CHARS ? `${mark.title.slice(0, LABEL_CHARS - 1)}…` : mark.title;
    const size = measure(text) + 6;
    const left = mark.x + 4 + size > width ? Math.max(0, mark.x - 4 - size) : mark.x + 4;
    let row = rowsEnd.findIndex((end) => left > end + 4);
    if (row === -1 && rowsEnd.length < LABEL_ROWS) row = rowsEnd.push(0) - 1;
    if (row === -1) continue;
    rowsEnd[row] = left + size;
    placed.push({ text, title: mark.title, left, row });
  }
  return placed;
}

/** What one point of the chart is: an hour (of one day), a day, a week (from Monday) or a month. */
export type Interval = 'minute' | 'hour' | 'day' | 'week' | 'month';
const intervalWords: Record<Interval, { now: string; plural: string }> = {
  minute: { now: 'this minute', plural: 'minutes' },
  hour: { now: 'this hour', plural: 'hours' },
  day: { now: 'today', plural: 'days' },
  week: { now: 'this week', plural: 'weeks' },
  month: { now: 'this month', plural: 'months' },
};

export function TrafficChart({
  points,
  annotations,
  current,
  interval = 'day',
  compared,
}: {
  points: DailyPoint[];
  annotations: Annotation[];
  /** The point now in the view's time zone (the hour, day, week or month): a last point at it is not over yet. */
  current: string;
  interval?: Interval;
  /** The compared period's visitors, by day of the period (the n-th against the n-th), drawn as a grey line. */
  compared?: { label: string; visitors: number[] };
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    // Times of day on the axis for minutes and hours, dates for longer points.
    const hourly = interval === 'hour' || interval === 'minute';
    const words = intervalWords[interval];
    const marks = annotations.map((a) => ({ at: seconds(a.date), title: a.title }));
    const open = points.length > 1 && points[points.length - 1]!.date === current;
    const last = points.length - 1;
    // The day not over yet: the full series stop the day before, a dashed series draws the last segment.
    const closed = (values: number[]) => values.map((v, i) => (open && i === last ? null : v));
    const tail = (values: number[]) => values.map((v, i) => (i >= last - 1 ? v : null));
    const measure = document.createElement('canvas').getContext('2d')!;
    measure.font = '12px system-ui, sans-serif';
    const options: uPlot.Options = {
      width: element.clientWidth || 600,
      height: 240 + LABEL_ROWS * LABEL_HEIGHT,
      padding: [LABEL_ROWS * LABEL_HEIGHT + 4, 8, 0, 0],
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'UTC'),
      scales: { x: { time: true } },
      // Days, weeks or months on the x axis (hours for one day): never finer than a point.
      axes: [
        {
          incrs:
            interval === 'minute'
              ? [60, 5 * 60, 10 * 60]
              : hourly
                ? [3_600, 3 * 3_600, 6 * 3_600]
                : [86_400, 7 * 86_400, 30 * 86_400, 365 * 86_400],
          values: (_plot, splits) =>
            splits.map((s) =>
              hourly
                ? new Date(s * 1000).toISOString().slice(11, 16)
                : new Date(s * 1000).toISOString().slice(5, 10).replace('-', '/'),
            ),
          space: 60,
        },
        { size: 56 },
      ],
      series: [
        {},
        { label: 'Visitors', stroke: '#4f46e5', width: 2, fill: 'rgba(79,70,229,0.08)' },
        { label: 'Pageviews', stroke: '#0ea5e9', width: 2 },
        ...(compared ? [{ label: compared.label, stroke: '#6b7280', width: 1.5, dash: [2, 3] }] : []),
        ...(open
          ? [
              { label: `Visitors ${words.now} so far`, stroke: '#4f46e5', width: 2, dash: [6, 5] },
              {
                label: `Pageviews ${words.now} so far`,
                stroke: '#0ea5e9',
                width: 2,
                dash: [6, 5],
              },
            ]
          : []),
      ],
      legend: { live: true },
      hooks: {
        draw: [
          (plot) => {
            const { ctx } = plot;
            ctx.save();
            ctx.strokeStyle = '#d97706';
            ctx.setLineDash([4, 4]);
            for (const mark of marks) {
              const x = Math.round(plot.valToPos(mark.at, 'x', true));
              if (x < plot.bbox.left || x > plot.bbox.left + plot.bbox.width) continue;
              ctx.beginPath();
              ctx.moveTo(x, plot.bbox.top);
              ctx.lineTo(x, plot.bbox.top + plot.bbox.height);
              ctx.stroke();
            }
            ctx.restore();
            // Titles as text above the plot area (read by assistive technology, never drawn over each other).
            const layer = plot.over;
            for (const old of layer.querySelectorAll('.mark-label')) old.remove();
            const placed = placeLabels(
              marks.map((m) => ({ x: plot.valToPos(m.at, 'x'), title: m.title })),
              plot.bbox.width / devicePixelRatio,
              (text) => measure.measureText(text).width,
            );
            for (const label of placed) {
              const span = document.createElement('span');
              span.className = 'mark-label';
              span.textContent = label.text;
              span.title = label.title;
              span.style.left = `${label.left}px`;
              span.style.top = `${label.row * LABEL_HEIGHT - LABEL_ROWS * LABEL_HEIGHT - 4}px`;
              layer.append(span);
            }
          },
        ],
      },
    };
    const data: uPlot.AlignedData = [
      points.map((p) => seconds(p.date)),
      closed(points.map((p) => p.visitors)),
      closed(points.map((p) => p.pageviews)),
      ...(compared ? [points.map((_, i) => compared.visitors[i] ?? null)] : []),
      ...(open ? [tail(points.map((p) => p.visitors)), tail(points.map((p) => p.pageviews))] : []),
    ];
    const plot = new uPlot(options, data, element);
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: element.clientWidth, height: 240 + LABEL_ROWS * LABEL_HEIGHT }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, annotations, current, interval, compared]);
  return (
    <div
      class="chart"
      ref={box}
      role="img"
      aria-label={`Visitors and pageviews per ${interval}, ${points.length} ${intervalWords[interval].plural}`}
    />
  );
}
