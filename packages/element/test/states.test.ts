/**
 * The data side seen from outside: what is requested and how (headers, id never in the URL,
 * ETag), every state and its slot, retries with backoff, 429 waits, renewal by event and by
 * token-url, and cancelling a request when the id changes. The fixture edge logs what it received.
 */
import { expect } from 'chai';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import {
  cleanup,
  FAST_RETRY,
  fixture,
  load,
  mount,
  nextEvent,
  requests,
  shadow,
  sleep,
  uniqueKey,
  until,
} from './helpers.ts';

const NO_RETRY = { retries: 0, baseDelay: 10, maxDelay: 10 };

function stateText(el: AnalyticsChart): string {
  return (shadow(el).querySelector('[part="state"]')?.textContent ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

function visible(node: Element | null | undefined): boolean {
  return !!node && node.getClientRects().length > 0;
}

describe('requests', () => {
  afterEach(cleanup);

  it('sends the id only as a bearer token, asks for JSON, and adds the range option', async () => {
    const key = uniqueKey();
    const id = `single-line;log=${key}`;
    const el = await load(id, { range: '7d' });
    const [first] = await requests(key);
    expect(first?.path).to.equal('/api/data');
    expect(first?.search).to.equal('range=7d');
    expect(first?.authorization).to.equal(`Bearer ${id}`);
    expect(first?.accept).to.equal('application/json');
    expect(first?.search).not.to.contain('single-line');
    expect(el.payload?.title).to.equal('Sign-ups (7d)');
  });

  it('defaults the endpoint to the directory the script was served from', async () => {
    const key = uniqueKey();
    const el = mount({ 'query-id': `bar;log=${key}`, lazy: 'false' });
    await nextEvent(el, 'analytics-chart-load');
    const [first] = await requests(key);
    // In this runner the element's module is /src/analytics-chart.component.ts.
    expect(first?.path).to.equal('/src/api/data');
  });

  it('revalidates with If-None-Match and keeps the chart on 304', async () => {
    const key = uniqueKey();
    const el = await load(`bar;log=${key}`);
    const chart = el.chart;
    let loads = 0;
    el.addEventListener('analytics-chart-load', () => loads++);
    el.reload();
    const log = await until(async () => {
      const all = await requests(key);
      return all.length === 2 && all[1]?.status ? all : undefined;
    }, 'the second request');
    expect(log[1]?.ifNoneMatch).to.match(/^"[0-9a-f]{24}"$/);
    expect(log[1]?.status).to.equal(304);
    await sleep(100);
    expect(loads).to.equal(0);
    expect(el.chart).to.equal(chart);
    expect(el.mode).to.equal('canvas');
  });

  it('sends same-origin cookies by default and none with credentials="omit"', async () => {
    // biome-ignore lint/suspicious/noDocumentCookie: the test needs a plain same-origin cookie
    document.cookie = 'element_test=yes; path=/';
    try {
      const withKey = uniqueKey();
      await load(`bar;log=${withKey}`);
      const withoutKey = uniqueKey();
      await load(`bar;log=${withoutKey}`, { credentials: 'omit' });
      expect((await requests(withKey))[0]?.cookie).to.contain('element_test=yes');
      expect((await requests(withoutKey))[0]?.cookie).to.equal(null);
    } finally {
      // biome-ignore lint/suspicious/noDocumentCookie: removes the cookie set above
      document.cookie = 'element_test=; path=/; max-age=0';
    }
  });

  it('changing query-id aborts the request in flight and shows only the new chart', async () => {
    const slowKey = uniqueKey('slow');
    const newKey = uniqueKey('new');
    const el = mount({
      'query-id': `single-line;delay=1500;log=${slowKey}`,
      endpoint: '/',
      lazy: 'false',
    });
    const graphs: string[] = [];
    el.addEventListener('analytics-chart-load', (e) => graphs.push(e.detail.payload.graph));
    await until(async () => (await requests(slowKey)).length === 1, 'the slow request');
    el.queryId = `bar;log=${newKey}`;
    await nextEvent(el, 'analytics-chart-load');
    const [slow] = await until(async () => {
      const log = await requests(slowKey);
      return log[0]?.aborted ? log : undefined;
    }, 'the server to see the abort');
    expect(slow?.aborted).to.be.true;
    await sleep(1700);
    expect(graphs).to.deep.equal(['Bar Chart']);
    expect(el.payload?.graph).to.equal('Bar Chart');
  });
});

describe('states', () => {
  afterEach(cleanup);

  it('shows a skeleton of the final height while loading, and the height does not change', async () => {
    const el = mount({ 'query-id': 'bar;delay=600', endpoint: '/', lazy: 'false', height: '240' });
    await el.updateComplete;
    expect(el.mode).to.equal('loading');
    const skeleton = shadow(el).querySelector('[part="skeleton"]');
    expect(visible(skeleton)).to.be.true;
    expect(shadow(el).querySelector('[part="base"]')?.getAttribute('aria-busy')).to.equal('true');
    const before = el.getBoundingClientRect().height;
    expect(before).to.equal(240);
    await nextEvent(el, 'analytics-chart-load');
    await el.updateComplete;
    expect(el.getBoundingClientRect().height).to.equal(before);
    expect(shadow(el).querySelector('[part="skeleton"]')).to.equal(null);
  });

  it('accepts CSS lengths for height', async () => {
    const el = mount({ 'query-id': 'bar', endpoint: '/', lazy: 'false', height: '10rem' });
    await el.updateComplete;
    expect(el.getBoundingClientRect().height).to.equal(160);
  });

  it('accepts a number of pixels set as the property (JSX, Vue and Svelte bindings)', async () => {
    const el = mount(
      { 'query-id': 'bar', endpoint: '/', lazy: 'false' },
      { properties: { height: 180 } },
    );
    await nextEvent(el, 'analytics-chart-load');
    expect(el.getBoundingClientRect().height).to.equal(180);
    el.height = '12rem';
    await el.updateComplete;
    expect(el.getBoundingClientRect().height).to.equal(192);
  });

  for (const name of ['empty', 'empty-nulls']) {
    it(`says "No data for this period" for ${name}`, async () => {
      const el = await load(name);
      expect(el.mode).to.equal('empty');
      expect(stateText(el)).to.equal('No data for this period');
      expect(el.chart).to.equal(undefined);
    });
  }

  const ERRORS: [string, number, string][] = [
    ['invalid', 401, 'This chart link is not valid.'],
    ['forbidden', 403, 'You do not have access to this chart.'],
    ['not_found', 404, 'This chart does not exist.'],
    ['bad_request', 400, 'This chart could not be requested.'],
    ['backend', 502, 'The analytics service is not answering right now. Retry'],
    ['timeout', 504, 'The query took too long to run. Retry'],
    ['rate_limited', 429, 'Too many requests. Retrying in 30 s.'],
  ];
  for (const [code, status, text] of ERRORS) {
    it(`shows the ${code} error and fires analytics-chart-error`, async () => {
      const payload = await fixture('single-line');
      expect(payload).to.exist;
      const el = mount(
        { 'query-id': `single-line;fail=${code}`, endpoint: '/', lazy: 'false' },
        { properties: { retryPolicy: NO_RETRY } },
      );
      const event = await nextEvent<CustomEvent>(el, 'analytics-chart-error');
      await el.updateComplete;
      expect(event.detail.status).to.equal(status);
      expect(event.detail.code).to.equal(code);
      // The edge's own sentence travels in the event (the fixture edge's text for this code).
      expect(event.detail.message).to.be.a('string').and.not.equal('');
      expect(el.mode).to.equal('error');
      expect(stateText(el)).to.equal(text);
      expect(shadow(el).querySelector('[role="alert"]')).to.exist;
    });
  }

  it('shows the network error after the retries run out, and Retry tries again', async () => {
    const key = uniqueKey();
    const el = mount(
      { 'query-id': `bar;drop=99;log=${key}`, endpoint: '/', lazy: 'false' },
      { properties: { retryPolicy: FAST_RETRY } },
    );
    const event = await nextEvent<CustomEvent>(el, 'analytics-chart-error');
    await el.updateComplete;
    expect(event.detail).to.deep.equal({
      status: 0,
      code: 'network',
      message: 'Cannot reach the chart server. Check your connection.',
    });
    // One attempt and FAST_RETRY's three retries.
    expect((await requests(key)).length).to.equal(4);
    expect(stateText(el)).to.equal('Cannot reach the chart server. Check your connection. Retry');
    const retry = shadow(el).querySelector<HTMLButtonElement>('[part="state"] button');
    retry?.click();
    await until(async () => (await requests(key)).length >= 5, 'a fifth request');
  });

  it('retries network failures with backoff and loads without showing an error', async () => {
    const key = uniqueKey();
    const el = mount(
      { 'query-id': `bar;drop=2;log=${key}`, endpoint: '/', lazy: 'false' },
      { properties: { retryPolicy: FAST_RETRY } },
    );
    let errors = 0;
    el.addEventListener('analytics-chart-error', () => errors++);
    await nextEvent(el, 'analytics-chart-load');
    const log = await requests(key);
    expect(log.map((r) => r.status)).to.deep.equal([-1, -1, 200]);
    expect(errors).to.equal(0);
    expect(el.mode).to.equal('canvas');
  });

  it('retries a failing backend (502) but not a timeout (504)', async () => {
    const backendKey = uniqueKey();
    const backend = mount(
      { 'query-id': `bar;fail=backend;log=${backendKey}`, endpoint: '/', lazy: 'false' },
      { properties: { retryPolicy: FAST_RETRY } },
    );
    await nextEvent(backend, 'analytics-chart-error');
    expect((await requests(backendKey)).length).to.equal(4);
    const timeoutKey = uniqueKey();
    const timeout = mount(
      { 'query-id': `bar;fail=timeout;log=${timeoutKey}`, endpoint: '/', lazy: 'false' },
      { properties: { retryPolicy: FAST_RETRY } },
    );
    await nextEvent(timeout, 'analytics-chart-error');
    await sleep(150);
    expect((await requests(timeoutKey)).length).to.equal(1);
  });

  it('waits for Retry-After on 429, saying so, then loads', async () => {
    const key = uniqueKey();
    const el = mount({ 'query-id': `bar;limit=1;log=${key}`, endpoint: '/', lazy: 'false' });
    await until(async () => (await requests(key)).length === 1, 'the first request');
    await until(() => el.mode === 'error', 'the rate-limit message');
    await el.updateComplete;
    expect(stateText(el)).to.equal('Too many requests. Retrying in 1 s.');
    await sleep(400);
    expect((await requests(key)).length, 'no request before Retry-After').to.equal(1);
    await nextEvent(el, 'analytics-chart-load', 3000);
    expect((await requests(key)).map((r) => r.status)).to.deep.equal([429, 200]);
  });

  it('replaces each state with its slot', async () => {
    const children =
      '<p slot="loading">Custom loading</p><p slot="empty">Custom empty</p><p slot="error">Custom error</p>';
    const loading = mount(
      { 'query-id': 'bar;delay=400', endpoint: '/', lazy: 'false' },
      { children },
    );
    await loading.updateComplete;
    expect(visible(loading.querySelector('[slot="loading"]'))).to.be.true;
    expect(visible(shadow(loading).querySelector('[part="skeleton"]'))).to.be.false;

    const empty = await load('empty', {}, { children });
    expect(visible(empty.querySelector('[slot="empty"]'))).to.be.true;
    expect(visible(shadow(empty).querySelector('[part="message"]'))).to.be.false;

    const failing = mount(
      { 'query-id': 'bar;fail=forbidden', endpoint: '/', lazy: 'false' },
      { children, properties: { retryPolicy: NO_RETRY } },
    );
    await nextEvent(failing, 'analytics-chart-error');
    await failing.updateComplete;
    expect(visible(failing.querySelector('[slot="error"]'))).to.be.true;
    expect(visible(shadow(failing).querySelector('[part="message"]'))).to.be.false;
    // Slotted content is hidden while another state is shown.
    expect(visible(failing.querySelector('[slot="loading"]'))).to.be.false;
  });
});

describe('token renewal', () => {
  afterEach(cleanup);

  it('lets the host answer the expired event with a fresh id, keeping the chart meanwhile', async () => {
    const key = uniqueKey();
    const el = await load(`single-line;expireAfter=1;log=${key}`);
    const chart = el.chart;
    let answer: (id: string) => void = () => {};
    const fresh = new Promise<string>((resolve) => {
      answer = resolve;
    });
    const expired = new Promise<CustomEvent>((resolve) => {
      document.addEventListener(
        'analytics-chart-token-expired',
        (e) => {
          e.detail.renew(fresh);
          resolve(e);
        },
        { once: true },
      );
    });
    el.reload();
    const event = await expired;
    expect(event.detail.queryId).to.equal(`single-line;expireAfter=1;log=${key}`);
    await sleep(50);
    // Still showing the last data while the host works on the new id.
    expect(el.mode).to.equal('canvas');
    expect(el.chart).to.equal(chart);
    const loaded = nextEvent(el, 'analytics-chart-load');
    answer(`multi-line;log=${key}`);
    await loaded;
    expect(el.queryId).to.equal(`multi-line;log=${key}`);
    expect(el.payload?.graph).to.equal('Multi Line');
    expect(el.chart, 'the same line chart, updated in place').to.equal(chart);
    const log = await requests(key);
    expect(log.filter((r) => r.path.endsWith('/api/renew'))).to.have.length(0);
  });

  it('asks token-url itself when no listener renews, with the old id as JSON', async () => {
    const key = uniqueKey();
    const id = `bar;expired;log=${key}`;
    const el = mount({
      'query-id': id,
      endpoint: '/',
      lazy: 'false',
      'token-url': '/custom/api/renew',
    });
    let fired = 0;
    el.addEventListener('analytics-chart-token-expired', () => fired++);
    await nextEvent(el, 'analytics-chart-load');
    const log = await requests(key);
    expect(fired).to.equal(1);
    expect(log.map((r) => `${r.method} ${r.path} ${r.status}`)).to.deep.equal([
      'GET /api/data 401',
      'POST /custom/api/renew 200',
      'GET /api/data 200',
    ]);
    expect(log[1]?.contentType).to.equal('application/json');
    expect(JSON.parse(log[1]?.body ?? '{}')).to.deep.equal({ id });
    expect(el.queryId).to.equal(`bar;log=${key}`);
  });

  it('defaults token-url to api/renew below the endpoint', async () => {
    const key = uniqueKey();
    const el = mount({ 'query-id': `bar;expired;log=${key}`, endpoint: '/', lazy: 'false' });
    await nextEvent(el, 'analytics-chart-load');
    expect((await requests(key)).map((r) => r.path)).to.deep.equal([
      '/api/data',
      '/api/renew',
      '/api/data',
    ]);
  });

  it('shows the expired state and fires an error when renewal fails', async () => {
    const key = uniqueKey();
    const el = mount({
      'query-id': `bar;expired;renew=fail;log=${key}`,
      endpoint: '/',
      lazy: 'false',
    });
    const event = await nextEvent<CustomEvent>(el, 'analytics-chart-error');
    await el.updateComplete;
    expect(event.detail.code).to.equal('expired');
    expect(event.detail.status).to.equal(401);
    expect(el.mode).to.equal('error');
    expect(stateText(el)).to.equal(
      'This chart link has expired. Reload the page to see current data.',
    );
  });
});
