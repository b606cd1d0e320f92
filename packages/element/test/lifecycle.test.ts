/**
 * Lifecycle: lazy loading, refresh only while visible, one chart updated in place, and a clean
 * disconnect (no chart, timer, observer, listener or request left) checked by instrumenting the
 * browser's own APIs, then by garbage collection (Chromium runs with --expose-gc).
 */

import { expect } from 'chai';
import { Chart } from 'chart.js';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import {
  cleanup,
  FAST_RETRY,
  load,
  mount,
  nextEvent,
  requests,
  sleep,
  uniqueKey,
  until,
} from './helpers.ts';

/** Whether a stack comes from the element's code or Chart.js (not mocha, the runner or the test). */
function fromElement(stack: string | undefined): boolean {
  return !!stack && /\/src\/|chart\.js/.test(stack);
}

// --- instrumentation: installed before any element exists in this page --------------------

const pendingTimers = new Map<number, string>();
const nativeSetTimeout = window.setTimeout.bind(window);
const nativeClearTimeout = window.clearTimeout.bind(window);
const nativeSetInterval = window.setInterval.bind(window);
const nativeClearInterval = window.clearInterval.bind(window);
window.setTimeout = ((handler: TimerHandler, ms?: number, ...args: unknown[]) => {
  const stack = new Error().stack ?? '';
  const id = nativeSetTimeout(
    (...a: unknown[]) => {
      pendingTimers.delete(id);
      if (typeof handler === 'function') handler(...a);
    },
    ms,
    ...args,
  );
  pendingTimers.set(id, stack);
  return id;
}) as typeof window.setTimeout;
window.clearTimeout = ((id?: number) => {
  if (id !== undefined) pendingTimers.delete(id);
  nativeClearTimeout(id);
}) as typeof window.clearTimeout;
window.setInterval = ((handler: TimerHandler, ms?: number, ...args: unknown[]) => {
  const id = nativeSetInterval(handler, ms, ...args);
  pendingTimers.set(id, `interval\n${new Error().stack ?? ''}`);
  return id;
}) as typeof window.setInterval;
window.clearInterval = ((id?: number) => {
  if (id !== undefined) pendingTimers.delete(id);
  nativeClearInterval(id);
}) as typeof window.clearInterval;

/** Observed targets per observer created by the element or Chart.js. */
const observing = new Map<object, Set<Element>>();
function track<T extends typeof IntersectionObserver | typeof ResizeObserver>(Native: T): T {
  // biome-ignore lint/suspicious/noExplicitAny: wraps either observer class generically
  const Tracked = class extends (Native as any) {
    constructor(...args: unknown[]) {
      super(...args);
      if (fromElement(new Error().stack)) observing.set(this, new Set());
    }
    observe(target: Element, ...rest: unknown[]) {
      observing.get(this)?.add(target);
      return super.observe(target, ...rest);
    }
    unobserve(target: Element) {
      observing.get(this)?.delete(target);
      return super.unobserve(target);
    }
    disconnect() {
      // Forget the observer itself too: holding it would hold its callback and the element.
      observing.delete(this);
      return super.disconnect();
    }
  };
  return Tracked as unknown as T;
}
window.IntersectionObserver = track(IntersectionObserver);
window.ResizeObserver = track(ResizeObserver);

/** Listeners the element or Chart.js added to long-lived targets (window, document, media queries). */
const listeners = new Set<string>();
const keyOf = (target: EventTarget, type: string, listener: unknown) => {
  const name =
    target === window ? 'window' : target === document ? 'document' : target.constructor.name;
  return `${name}:${type}:${listenerIds.get(listener as object) ?? 0}`;
};
const listenerIds = new WeakMap<object, number>();
let nextListenerId = 1;
const nativeAdd = EventTarget.prototype.addEventListener;
const nativeRemove = EventTarget.prototype.removeEventListener;
EventTarget.prototype.addEventListener = function (type, listener, options) {
  const longLived = this === window || this === document || this instanceof MediaQueryList;
  if (longLived && listener && fromElement(new Error().stack)) {
    if (!listenerIds.has(listener)) listenerIds.set(listener, nextListenerId++);
    listeners.add(keyOf(this, type, listener));
  }
  return nativeAdd.call(this, type, listener, options);
};
EventTarget.prototype.removeEventListener = function (type, listener, options) {
  if (listener) listeners.delete(keyOf(this, type, listener));
  return nativeRemove.call(this, type, listener, options);
};

function leftovers() {
  return {
    charts: Object.keys(Chart.instances).length,
    timers: [...pendingTimers.values()].filter(fromElement),
    observed: [...observing.values()].reduce((n, targets) => n + targets.size, 0),
    listeners: [...listeners],
  };
}

const CLEAN = { charts: 0, timers: [], observed: 0, listeners: [] };

function container(of: AnalyticsChart): HTMLElement {
  const parent = of.parentElement;
  if (!parent) throw new Error('not mounted');
  return parent;
}

/** Moves a chart's container out of the viewport (or back). */
function offscreen(el: AnalyticsChart, away: boolean): void {
  const c = container(el);
  c.style.position = away ? 'fixed' : '';
  c.style.top = away ? '5000px' : '';
}

describe('lifecycle', () => {
  afterEach(cleanup);

  it('lazy (the default) fetches only once the chart comes near the viewport', async () => {
    const key = uniqueKey();
    const el = mount({ 'query-id': `bar;log=${key}`, endpoint: '/' });
    offscreen(el, true);
    await sleep(400);
    expect(await requests(key)).to.have.length(0);
    expect(el.mode).to.equal('loading');
    offscreen(el, false);
    await nextEvent(el, 'analytics-chart-load');
    expect(await requests(key)).to.have.length(1);
  });

  it('lazy="false" fetches at once, even out of view', async () => {
    const key = uniqueKey();
    const el = mount({ 'query-id': `bar;log=${key}`, endpoint: '/', lazy: 'false' });
    offscreen(el, true);
    await nextEvent(el, 'analytics-chart-load');
    expect(await requests(key)).to.have.length(1);
  });

  it('the string "false" set as the property (Vue, Svelte) fetches at once too', async () => {
    // Frameworks set an attribute written in a template as the property when the element has one.
    const key = uniqueKey();
    const el = mount(
      { 'query-id': `bar;log=${key}`, endpoint: '/' },
      { properties: { lazy: 'false' as unknown as boolean } },
    );
    offscreen(el, true);
    await nextEvent(el, 'analytics-chart-load');
    expect(await requests(key)).to.have.length(1);
  });

  it('refresh re-fetches on its interval only while visible, and catches up when shown', async () => {
    const key = uniqueKey();
    const el = await load(`bar;log=${key}`, { refresh: '1' });
    await until(async () => (await requests(key)).length >= 2, 'a refresh', 3000);
    offscreen(el, true);
    await sleep(300);
    const hiddenAt = (await requests(key)).length;
    await sleep(2300);
    expect((await requests(key)).length, 'no refresh while out of view').to.equal(hiddenAt);
    offscreen(el, false);
    await until(async () => (await requests(key)).length > hiddenAt, 'the overdue refresh', 1500);
  });

  it('refresh pauses while the tab is hidden, and catches up when it is shown', async () => {
    const key = uniqueKey();
    const el = await load(`bar;log=${key}`, { refresh: '1' });
    await until(async () => (await requests(key)).length >= 2, 'a refresh', 3000);
    // A background tab, as the browser reports it: the page's own visibilityState shadows the
    // prototype's getter, and the event tells listeners.
    const setVisibility = (state: DocumentVisibilityState) => {
      Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    };
    try {
      setVisibility('hidden');
      await sleep(300);
      const hiddenAt = (await requests(key)).length;
      await sleep(2300);
      expect((await requests(key)).length, 'no refresh while hidden').to.equal(hiddenAt);
      expect(el.isConnected).to.equal(true);
      setVisibility('visible');
      await until(async () => (await requests(key)).length > hiddenAt, 'the overdue refresh', 1500);
    } finally {
      delete (document as { visibilityState?: unknown }).visibilityState;
    }
  });

  it('follows the width of its container', async () => {
    const el = await load('bar');
    const chart = el.chart;
    expect(chart?.width).to.be.within(560, 600);
    container(el).style.width = '320px';
    await until(() => (chart?.width ?? 0) <= 320, 'the narrower chart');
    expect(el.chart).to.equal(chart);
    expect(chart?.width).to.be.within(280, 320);
  });

  it('creates the chart once and updates it in place when the data changes', async () => {
    const el = await load('single-line');
    const chart = el.chart;
    const loaded = nextEvent(el, 'analytics-chart-load');
    el.queryId = 'multi-line';
    await loaded;
    await el.updateComplete;
    expect(el.chart).to.equal(chart);
    expect(el.chart?.data.datasets).to.have.length(3);
    expect(Object.keys(Chart.instances)).to.have.length(1);
  });

  it('disconnecting leaves no chart, timer, observer, listener or request behind', async () => {
    expect(leftovers(), 'clean before').to.deep.equal(CLEAN);
    // A loaded chart with a refresh timer, following the color scheme, with legend and tooltip.
    const loaded = await load('multi-line', { refresh: '30', theme: 'auto' });
    // One waiting for a retry after a dropped connection.
    const retrying = mount(
      { 'query-id': `bar;drop=99;log=${uniqueKey()}`, endpoint: '/', lazy: 'false' },
      { properties: { retryPolicy: { ...FAST_RETRY, baseDelay: 60_000, maxDelay: 60_000 } } },
    );
    // One with a request in flight.
    const slowKey = uniqueKey();
    mount({
      'query-id': `bar;delay=3000;log=${slowKey}`,
      endpoint: '/',
      lazy: 'false',
    });
    // One lazy chart still waiting to come into view.
    const lazy = mount({ 'query-id': 'bar', endpoint: '/' });
    offscreen(lazy, true);
    await until(async () => (await requests(slowKey)).length === 1, 'the slow request');
    await until(
      () => retrying.status === 'loading' && !!leftovers().timers.length,
      'the retry timer',
    );
    const busy = leftovers();
    expect(busy.charts).to.equal(1);
    expect(busy.timers.length).to.be.greaterThan(1);
    expect(busy.observed).to.be.greaterThan(3);
    expect(busy.listeners.length).to.be.greaterThan(0);

    cleanup();
    await until(async () => (await requests(slowKey))[0]?.aborted, 'the aborted request');
    expect(leftovers()).to.deep.equal(CLEAN);
    expect(loaded.chart).to.equal(undefined);
  });

  it('a reconnected chart draws again and revalidates', async () => {
    const key = uniqueKey();
    const el = await load(`bar;log=${key}`);
    const parent = container(el);
    el.remove();
    expect(el.chart).to.equal(undefined);
    parent.append(el);
    await until(() => el.chart, 'a chart after reconnection');
    const log = await until(async () => {
      const all = await requests(key);
      return all.length === 2 && all[1]?.status ? all : undefined;
    }, 'the revalidation');
    expect(log[1]?.status).to.equal(304);
    expect(Object.keys(Chart.instances)).to.have.length(1);
  });

  it('disconnected charts are garbage collected', async function () {
    // Twenty charts and up to 10 s of collection outlast the default limit on a busy machine.
    this.timeout(45_000);
    const gc = (window as unknown as { gc?: () => void }).gc;
    if (!gc) throw new Error('run Chromium with --js-flags=--expose-gc');
    // Each chart lives only inside `cycle`, so no variable of this test holds one.
    const cycle = async (i: number) => {
      const el = await load(i % 2 ? 'multi-line' : 'pie', { theme: 'auto', refresh: '60' });
      cleanup();
      return new WeakRef(el);
    };
    const refs: WeakRef<AnalyticsChart>[] = [];
    for (let i = 0; i < 20; i++) refs.push(await cycle(i));
    expect(leftovers()).to.deep.equal(CLEAN);
    // WeakRef targets stay alive until the current task ends, and a busy machine runs the tasks
    // that drop a chart's last references (aborts, frames, observer deliveries) late: collect in
    // later tasks, after a frame where the page renders, for up to 10 s, which a leak outlasts.
    const reachable = () => refs.flatMap((r, i) => (r.deref() ? [i] : []));
    for (let round = 0; round < 100 && reachable().length; round++) {
      await Promise.race([new Promise((r) => requestAnimationFrame(r)), sleep(100)]);
      await sleep(0);
      gc();
    }
    expect(reachable(), 'indexes of elements still reachable').to.deep.equal([]);
  });
});
