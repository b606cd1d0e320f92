import { registerChartParts } from './register-chart-parts.ts';

let warmed = false;

/**
 * Draws one tiny line chart on a detached canvas, once per page, while the first request is in
 * flight. V8 compiles Chart.js's functions on first use, which makes the first chart on a page
 * much slower to draw than later ones; doing that work during the network wait takes it off
 * the path from payload to picture. Detached and not responsive: no observer, nothing to clean up
 * beyond `destroy()`.
 */
export function warmUpChartJs(): void {
  if (warmed) return;
  warmed = true;
  const Chart = registerChartParts();
  const canvas = document.createElement('canvas');
  canvas.width = 300;
  canvas.height = 150;
  const chart = new Chart(canvas, {
    type: 'line',
    data: {
      datasets: [
        {
          data: [
            { x: 0, y: 1 },
            { x: 1, y: 3 },
            { x: 2, y: 2 },
          ],
        },
      ],
    },
    options: {
      responsive: false,
      animation: false,
      parsing: false,
      normalized: true,
      scales: {
        x: { type: 'linear', ticks: { callback: (v) => String(v) } },
        y: { type: 'linear' },
      },
    },
  });
  chart.destroy();
}
