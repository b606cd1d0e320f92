/** Shared helpers of the browser tests: mounting, waiting, the fixture server's log. */
import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import '../src/index.ts';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import type { RetryPolicy } from '../src/data/retry-delay.ts';

/** Retries in milliseconds, so backoff tests take no time. */
export const FAST_RETRY: RetryPolicy = { retries: 3, baseDelay: 10, maxDelay: 40 };

let counter = 0;

/** A log key unique to this page and test. */
export function uniqueKey(name = 'k'): string {
  counter++;
  return `${name}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

/** One request as the fixture edge saw it. */
export interface LoggedRequest {
  path: string;
  method: string;
  search: string;
  authorization: string | null;
  accept: string | null;
  contentType: string | null;
  ifNoneMatch: string | null;
  cookie: string | null;
  body: string | null;
  aborted: boolean;
  status: number;
}

/** The requests the fixture edge logged under a key. */
export async function requests(key: string): Promise<LoggedRequest[]> {
  const response = await fetch(`/__fixture/log?key=${encodeURIComponent(key)}`);
  return (await response.json()) as LoggedRequest[];
}

/** A fixture payload as the fixture edge sends it, read independently of the element. */
export async function fixture(name: string): Promise<ChartPayload> {
  const response = await fetch(new URL(`./fixtures/${name}.json`, import.meta.url));
  return (await response.json()) as ChartPayload;
}

const containers: HTMLElement[] = [];

/** Mounts `<analytics-chart>` with attributes (and properties) in a fresh container in the page. */
export function mount(
  attributes: Record<string, string>,
  options: { properties?: Partial<AnalyticsChart>; children?: string; width?: number } = {},
): AnalyticsChart {
  const container = document.createElement('div');
  container.style.width = `${options.width ?? 600}px`;
  const el = document.createElement('analytics-chart');
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
  Object.assign(el, options.properties ?? {});
  if (options.children) el.innerHTML = options.children;
  container.append(el);
  document.body.append(container);
  containers.push(container);
  return el;
}

/** Removes everything {@link mount} added. */
export function cleanup(): void {
  for (const c of containers.splice(0)) c.remove();
}

/** Resolves with the next event of that type, or rejects after `timeout` ms. */
export function nextEvent<T extends Event = CustomEvent>(
  target: EventTarget,
  type: string,
  timeout = 5000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      target.removeEventListener(type, on);
      reject(new Error(`no ${type} within ${timeout} ms`));
    }, timeout);
    const on = (event: Event) => {
      clearTimeout(timer);
      target.removeEventListener(type, on);
      resolve(event as T);
    };
    target.addEventListener(type, on);
  });
}

/** Polls until `check` returns a truthy value; rejects with `what` after `timeout` ms. */
export async function until<R>(
  check: () => R,
  what: string,
  timeout = 5000,
): Promise<Exclude<Awaited<R>, undefined | null | false | 0 | ''>> {
  const deadline = performance.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<Awaited<R>, undefined | null | false | 0 | ''>;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** Waits for `n` animation frames (layout, ResizeObserver and Chart.js resize have run). */
export async function frames(n = 2): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => requestAnimationFrame(() => r(undefined)));
}

/** Sleeps; only for "nothing happens during this time" assertions. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Mounts a chart for a fixture and resolves once its load event fired. */
export async function load(
  id: string,
  attributes: Record<string, string> = {},
  options: Parameters<typeof mount>[1] = {},
): Promise<AnalyticsChart> {
  const el = mount({ 'query-id': id, endpoint: '/', lazy: 'false', ...attributes }, options);
  await nextEvent(el, 'analytics-chart-load');
  await el.updateComplete;
  return el;
}

/** The element's shadow root, typed. */
export function shadow(el: AnalyticsChart): ShadowRoot {
  if (!el.shadowRoot) throw new Error('no shadow root');
  return el.shadowRoot;
}

/** An RGBA pixel of the chart canvas at CSS pixel coordinates. */
export function pixel(el: AnalyticsChart, x: number, y: number): [number, number, number, number] {
  const chart = el.chart;
  if (!chart) throw new Error('no chart');
  const ratio = chart.currentDevicePixelRatio;
  const data = chart.ctx.getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data;
  return [data[0] ?? 0, data[1] ?? 0, data[2] ?? 0, data[3] ?? 0];
}

/** Whether two colors are within `tolerance` on each channel. */
export function near(a: readonly number[], b: readonly number[], tolerance = 8): boolean {
  return a.every((v, i) => Math.abs(v - (b[i] ?? 0)) <= tolerance);
}

/** The element's Chart.js instance; throws when there is none. */
export function chartOf(el: AnalyticsChart) {
  const chart = el.chart;
  if (!chart) throw new Error('no Chart.js instance');
  return chart;
}

/** The Chart.js type of the element's chart (`line`, `bar`, `pie`, `doughnut`). */
export function chartType(el: AnalyticsChart): string {
  return (chartOf(el).config as unknown as { type: string }).type;
}
