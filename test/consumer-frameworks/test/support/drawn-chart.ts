import type { Page } from 'puppeteer-core';

/** What the page's `<analytics-chart>` drew, read from its canvas and its Chart.js instance. */
export interface DrawnChart {
  status: string;
  title: string | undefined;
  /** Sum of the first dataset's values. */
  total: number;
  /** Canvas pixels within a small distance of the first dataset's line color. */
  seriesPixels: number;
  /** Public members named in the manifest that the element instance does not have. */
  missingMembers: string[];
}

/** Waits for the chart to be drawn, then reads it. */
export async function readDrawnChart(page: Page, members: string[]): Promise<DrawnChart> {
  await page.waitForFunction(
    () => {
      const el = document.querySelector('analytics-chart') as unknown as { chart?: unknown };
      return Boolean(el?.chart) && document.querySelector('#status')?.textContent !== 'Loading…';
    },
    { timeout: 60_000 },
  );
  return page.evaluate((members) => {
    // biome-ignore lint/suspicious/noExplicitAny: the element's public API, read in the page.
    const el = document.querySelector('analytics-chart') as any;
    const canvas = el.shadowRoot.querySelector('canvas') as HTMLCanvasElement;
    const dataset = el.chart.data.datasets[0];
    // The canvas itself turns any CSS color into `#rrggbb`.
    const probe = document.createElement('canvas').getContext('2d') as CanvasRenderingContext2D;
    probe.fillStyle = dataset.borderColor;
    const hex = String(probe.fillStyle);
    const want = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
    const { data } = (canvas.getContext('2d') as CanvasRenderingContext2D).getImageData(
      0,
      0,
      canvas.width,
      canvas.height,
    );
    let seriesPixels = 0;
    for (let i = 0; i < data.length; i += 4) {
      const distance =
        Math.abs((data[i] ?? 0) - (want[0] ?? 0)) +
        Math.abs((data[i + 1] ?? 0) - (want[1] ?? 0)) +
        Math.abs((data[i + 2] ?? 0) - (want[2] ?? 0));
      if (distance < 40 && (data[i + 3] ?? 0) > 200) seriesPixels++;
    }
    return {
      status: el.status,
      title: el.payload?.title,
      total: dataset.data.reduce((sum: number, p: { y: number | null }) => sum + (p.y ?? 0), 0),
      seriesPixels,
      missingMembers: members.filter((name: string) => !(name in el)),
    };
  }, members);
}
