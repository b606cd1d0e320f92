import type { ChartType, Plugin } from 'chart.js';

/** Options of {@link stackFillPlugin}: the fill color of each dataset by index (unset: no fill). */
export interface StackFillOptions {
  colors?: (string | undefined)[];
}

declare module 'chart.js' {
  interface PluginOptionsByType<TType extends ChartType> {
    analyticsChartStackFill?: StackFillOptions;
  }
}

/**
 * Fills each stacked line down to the visible line below it (the first down to zero). Chart.js's
 * Filler plugin does this and far more (targets, gaps, radial fills), all of which would ship in
 * the bundle; the element only needs this one case. A missing value fills nothing in that bucket.
 */
export const stackFillPlugin: Plugin = {
  id: 'analyticsChartStackFill',
  beforeDatasetsDraw(chart, _args, options: StackFillOptions) {
    const colors = options.colors;
    const yScale = chart.scales.y;
    if (!colors?.length || !yScale) return;
    const { ctx, chartArea } = chart;
    const zero = yScale.getPixelForValue(0);
    let below: number[] | undefined;
    ctx.save();
    ctx.beginPath();
    ctx.rect(chartArea.left, chartArea.top, chartArea.width, chartArea.height);
    ctx.clip();
    for (const meta of chart.getSortedVisibleDatasetMetas()) {
      const color = colors[meta.index];
      if (!color) continue;
      const points = meta.data as unknown as { x: number; y: number; skip?: boolean }[];
      const base = below ?? points.map(() => zero);
      const top = points.map((p, i) => (p.skip || Number.isNaN(p.y) ? (base[i] ?? zero) : p.y));
      ctx.beginPath();
      points.forEach((p, i) => {
        if (i === 0) ctx.moveTo(p.x, top[i] ?? zero);
        else ctx.lineTo(p.x, top[i] ?? zero);
      });
      for (let i = points.length - 1; i >= 0; i--) {
        ctx.lineTo(points[i]?.x ?? 0, base[i] ?? zero);
      }
      ctx.closePath();
      ctx.fillStyle = color;
      ctx.fill();
      below = top;
    }
    ctx.restore();
  },
};
