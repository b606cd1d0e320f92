import type { ChartType, Plugin } from 'chart.js';

/** Options of {@link backgroundPlugin}. */
export interface BackgroundPluginOptions {
  color?: string;
}

declare module 'chart.js' {
  interface PluginOptionsByType<TType extends ChartType> {
    analyticsChartBackground?: BackgroundPluginOptions;
  }
}

/**
 * Paints the theme background under the chart. The page behind the canvas shows through otherwise,
 * which an exported PNG does not carry: a dark chart's light text would vanish on white.
 */
export const backgroundPlugin: Plugin = {
  id: 'analyticsChartBackground',
  beforeDraw(chart, _args, options: BackgroundPluginOptions) {
    if (!options.color) return;
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = options.color;
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};
