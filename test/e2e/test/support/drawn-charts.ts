import type { Frame, Page } from 'puppeteer-core';
import type { PageDocument, PageElement } from './page-dom.ts';

declare const document: PageDocument;

/** What one `<analytics-chart>` on a page shows, read from the DOM and its Chart.js instance. */
export interface DrawnChart {
  query: string | null;
  queryId: string | null;
  status: string;
  mode: string;
  graph: string | undefined;
  title: string | undefined;
  /** The window the edge computed the chart for (Unix seconds). */
  window: { start: number; end: number } | undefined;
  /** Canvas charts: bucket or category labels, and each drawn dataset's name and values. */
  labels?: string[];
  series?: { name: string; values: (number | null)[] }[];
  /** Single Value: the big number and the "vs … in the previous period" line, as shown. */
  valueText?: string;
  versusText?: string;
  /** Table and Samples: header and cell texts, as shown. */
  columns?: string[];
  rows?: string[][];
}

/** Reads every chart on the page or frame (in document order). */
export function readDrawnCharts(page: Page | Frame): Promise<DrawnChart[]> {
  return page.$$eval('analytics-chart', (elements) =>
    (elements as unknown as PageElement[]).map((el) => {
      // biome-ignore lint/suspicious/noExplicitAny: the element's public getters, read in the page.
      const chart = el as any;
      const payload = chart.payload;
      const root = el.shadowRoot;
      const out: Record<string, unknown> = {
        query: el.getAttribute('data-query'),
        // The property: a renewed id replaces it there (the attribute keeps the one first given).
        queryId: chart.queryId ?? el.getAttribute('query-id'),
        status: chart.status,
        mode: chart.mode,
        graph: payload?.graph,
        title: payload?.title,
        window: payload?.range,
      };
      if (chart.mode === 'canvas' && chart.chart) {
        const line = String(payload.graph).endsWith(' Line');
        const data = chart.chart.data;
        out.labels = line ? [...payload.labels] : data.labels.map(String);
        out.series = data.datasets.map((d: { label: string; data: unknown[] }) => ({
          name: d.label,
          values: d.data.map((p) =>
            line ? ((p as { y: number | null }).y ?? null) : ((p as number | null) ?? null),
          ),
        }));
      } else if (chart.mode === 'value') {
        out.valueText = root?.querySelector('[part=value]')?.textContent?.trim();
        out.versusText = root?.querySelector('.versus')?.textContent?.trim();
      } else if (chart.mode === 'table') {
        out.columns = [...(root?.querySelectorAll('[part=table] thead th') ?? [])].map(
          (th) => th.textContent?.trim() ?? '',
        );
        out.rows = [...(root?.querySelectorAll('[part=table] tbody tr') ?? [])].map((tr) =>
          [...tr.cells].map((td) => td.textContent?.trim() ?? ''),
        );
      }
      return out as unknown as DrawnChart;
    }),
  );
}

/** Waits until no chart on the page or frame is loading any more (each drawn, empty or failed). */
export async function waitForCharts(page: Page | Frame, timeoutMs = 60_000): Promise<void> {
  await page.waitForFunction(
    () => {
      const charts = [...document.querySelectorAll('analytics-chart')];
      return (
        charts.length > 0 &&
        charts.every((el) => {
          const { status } = el as unknown as { status: string };
          return status === 'ready' || status === 'error';
        })
      );
    },
    { timeout: timeoutMs, polling: 100 },
  );
}
