import {
  ArcElement,
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Decimation,
  DoughnutController,
  LinearScale,
  LineController,
  LineElement,
  PieController,
  PointElement,
} from 'chart.js';

let registered = false;

/**
 * Registers exactly the Chart.js parts the element draws with, once. Everything else (time scales
 * and their date adapter, radar, polar, title, the legend and tooltip plugins, which the element replaces
 * with HTML, and the Filler plugin, replaced by `stack-fill-plugin.ts`) stays out of the bundle.
 */
export function registerChartParts(): typeof Chart {
  if (!registered) {
    Chart.register(
      LineController,
      LineElement,
      PointElement,
      BarController,
      BarElement,
      PieController,
      DoughnutController,
      ArcElement,
      CategoryScale,
      LinearScale,
      Decimation,
    );
    registered = true;
  }
  return Chart;
}
