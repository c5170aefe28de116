import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Annotation } from './api';

// Visitors and pageviews per day over the range (uPlot: small, fast on thousands of points), with each annotation
// drawn as a dashed line and its title on the day it names.

export interface DailyPoint {
  date: string;
  visitors: number;
  pageviews: number;
}

const seconds = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

export function TrafficChart({ points, annotations }: { points: DailyPoint[]; annotations: Annotation[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const marks = annotations.map((a) => ({ at: seconds(a.date), title: a.title }));
    const options: uPlot.Options = {
      width: element.clientWidth || 600,
      height: 240,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'UTC'),
      scales: { x: { time: true } },
      // Days, weeks or months on the x axis, never hours: every point is one day.
      axes: [
        {
          incrs: [86_400, 7 * 86_400, 30 * 86_400, 365 * 86_400],
          values: (_plot, splits) => splits.map((s) => new Date(s * 1000).toISOString().slice(5, 10).replace('-', '/')),
          space: 60,
        },
        { size: 56 },
      ],
      series: [
        {},
        { label: 'Visitors', stroke: '#4f46e5', width: 2, fill: 'rgba(79,70,229,0.08)' },
        { label: 'Pageviews', stroke: '#0ea5e9', width: 2 },
      ],
      legend: { live: true },
      hooks: {
        draw: [
          (plot) => {
            const { ctx } = plot;
            ctx.save();
            ctx.strokeStyle = '#d97706';
            ctx.fillStyle = '#92400e';
            ctx.setLineDash([4, 4]);
            ctx.font = `${12 * devicePixelRatio}px system-ui, sans-serif`;
            for (const mark of marks) {
              const x = Math.round(plot.valToPos(mark.at, 'x', true));
              if (x < plot.bbox.left || x > plot.bbox.left + plot.bbox.width) continue;
              ctx.beginPath();
              ctx.moveTo(x, plot.bbox.top);
              ctx.lineTo(x, plot.bbox.top + plot.bbox.height);
              ctx.stroke();
              // The title goes right of its line, or left of it near the right edge.
              const label = mark.title.slice(0, 30);
              const width = ctx.measureText(label).width;
              const left = x + 4 + width > plot.bbox.left + plot.bbox.width ? x - 4 - width : x + 4;
              ctx.fillText(label, left, plot.bbox.top + 14 * devicePixelRatio);
            }
            ctx.restore();
          },
        ],
      },
    };
    const data: uPlot.AlignedData = [
      points.map((p) => seconds(p.date)),
      points.map((p) => p.visitors),
      points.map((p) => p.pageviews),
    ];
    const plot = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 240 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, annotations]);
  return (
    <div class="chart" ref={box} role="img" aria-label={`Visitors and pageviews per day, ${points.length} days`} />
  );
}
