import type { Frame, Page } from 'puppeteer-core';

/** What a reader sees where a snippet was pasted. */
export type Outcome = 'draws' | 'refused' | 'removed';

/** The outcome and, for a refusal, the message the reader is shown. */
export interface Seen {
  outcome: Outcome;
  message?: string;
}

/**
 * The state of the one chart of a document, read in the page: `ready` with the share of its
 * canvas painted, `error` with its message, the embed page's own error page, or `none` (no chart
 * element, or one never upgraded). Evaluated as a string: the suite compiles without the DOM
 * library.
 */
const READ_CHART = `(() => {
  const page = document.querySelector('.message[role=alert]');
  if (page) return { state: 'error', message: page.querySelector('span')?.textContent ?? '' };
  const chart = document.querySelector('analytics-chart');
  if (!chart) return { state: 'none' };
  if (!chart.shadowRoot) return { state: 'loading' };
  if (chart.status === 'error') {
    const alert = chart.shadowRoot.querySelector('[role=alert]');
    return { state: 'error', message: (alert?.textContent ?? '').trim() };
  }
  if (chart.status !== 'ready') return { state: 'loading' };
  const canvas = chart.shadowRoot.querySelector('canvas');
  if (!canvas || canvas.width === 0) return { state: 'loading' };
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
  return { state: 'ready', painted: painted / (pixels.length / 4) };
})()`;

interface ChartState {
  state: 'ready' | 'error' | 'none' | 'loading';
  message?: string;
  painted?: number;
}

/** Reads a frame's chart; a frame that navigates away meanwhile is read again next time. */
async function readChart(frame: Frame): Promise<ChartState> {
  try {
    return (await frame.evaluate(READ_CHART)) as ChartState;
  } catch {
    return { state: 'loading' };
  }
}

/**
 * Loads `url` and reports what became of the chart pasted in it: drawn (canvas pixels painted,
 * in the page or in an embed frame of `edge`), refused (the chart's or the embed page's error
 * message), or removed (neither an embed frame nor a working element once the page loaded).
 */
export async function chartOutcome(page: Page, url: string, edge: string): Promise<Seen> {
  await page.goto(url, { waitUntil: 'load' });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const frames = page.frames().filter((frame) => frame.url().startsWith(`${edge}/embed/`));
    const hasFrame = (await page.evaluate(
      `[...document.querySelectorAll('iframe')].some((f) => f.src.startsWith(${JSON.stringify(`${edge}/embed/`)}))`,
    )) as boolean;
    const states = await Promise.all([page.mainFrame(), ...frames].map(readChart));
    const ready = states.find((s) => s.state === 'ready');
    if (ready && (ready.painted ?? 0) > 0.01) return { outcome: 'draws' };
    const error = states.find((s) => s.state === 'error');
    if (error) return { outcome: 'refused', message: error.message ?? '' };
    if (!hasFrame && states.every((s) => s.state === 'none')) return { outcome: 'removed' };
    if (Date.now() > deadline) {
      throw new Error(`${url}: no outcome within 30 s: ${JSON.stringify(states)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
