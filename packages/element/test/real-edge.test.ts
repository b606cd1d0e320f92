/**
 * Against the real edge (`@analytics-chart/edge` on Node, another origin than this page) with the
 * real engine behind it, started by the test runner: cross-origin data with a public id, the CDN
 * bundle served by the edge on a plain page, a session-bound id
 * with the host's cookie, and renewal of an expired id through the edge.
 */
import { expect } from 'chai';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import { chartOf, cleanup, mount, nextEvent, sleep, until } from './helpers.ts';

interface RealEdge {
  edgeUrl: string;
  controlUrl: string;
}
interface Ids {
  publicDaily: string;
  session: string;
  expiring: string;
  /** Events per UTC day, counted by the edge process with a plain loop over what it ingested. */
  counts: Record<string, number>;
}

const config = (await (await fetch('/__real-edge/config')).json()) as RealEdge & { error?: string };
if (config.error) throw new Error(`the real edge did not start: ${config.error}`);

async function freshIds(): Promise<Ids> {
  return (await (await fetch(`${config.controlUrl}/ids`)).json()) as Ids;
}

/** What each bucket of the drawn chart must show: the hand count, 0 for days without events. */
function expected(el: AnalyticsChart, ids: Ids): number[] {
  return (el.payload?.labels ?? []).map((label) => ids.counts[label] ?? 0);
}

function values(el: AnalyticsChart): (number | null)[] {
  return ((chartOf(el).data.datasets[0]?.data ?? []) as { y: number | null }[]).map((p) => p.y);
}

describe('against the real edge', () => {
  afterEach(cleanup);

  it('draws a public chart fetched cross-origin', async () => {
    const ids = await freshIds();
    const el = mount({ 'query-id': ids.publicDaily, endpoint: config.edgeUrl, lazy: 'false' });
    const event = await nextEvent<CustomEvent>(el, 'analytics-chart-load', 8000);
    expect(new URL(config.edgeUrl).origin).not.to.equal(location.origin);
    expect(event.detail.payload.title).to.equal('Daily events');
    expect(event.detail.payload.granularity).to.equal('Day');
    // Every day with events is a bucket, and the chart shows the hand counts (20 events in all).
    for (const day of Object.keys(ids.counts)) expect(event.detail.payload.labels).to.include(day);
    expect(values(el)).to.deep.equal(expected(el, ids));
    expect(values(el).reduce<number>((sum, n) => sum + (n ?? 0), 0)).to.equal(20);
  });

  it('keeps a cross-origin chart on refresh without re-drawing (ETag through the HTTP cache)', async () => {
    const ids = await freshIds();
    const el = mount({ 'query-id': ids.publicDaily, endpoint: config.edgeUrl, lazy: 'false' });
    await nextEvent(el, 'analytics-chart-load', 8000);
    let loads = 0;
    let errors = 0;
    el.addEventListener('analytics-chart-load', () => loads++);
    el.addEventListener('analytics-chart-error', () => errors++);
    const payload = el.payload;
    el.reload();
    await until(() => !el.shadowRoot?.querySelector('[aria-busy="true"]'), 'the revalidation');
    await sleep(100);
    expect(errors).to.equal(0);
    expect(loads).to.equal(0);
    expect(el.payload).to.equal(payload);
  });

  it('runs from the bundle the edge serves, finding the edge next to the script', async () => {
    const ids = await freshIds();
    const frame = document.createElement('iframe');
    frame.style.width = '700px';
    frame.style.height = '400px';
    // The page is this origin's; the script and the data come from the edge.
    frame.srcdoc = `<!doctype html><html lang="en"><body>
      <script type="module" src="${config.edgeUrl}/analytics-chart.js"></script>
      <analytics-chart query-id="${ids.publicDaily}"></analytics-chart></body></html>`;
    document.body.append(frame);
    try {
      const chart = await until(
        () => {
          const el = frame.contentDocument?.querySelector(
            'analytics-chart',
          ) as AnalyticsChart | null;
          return el?.chart ? el : undefined;
        },
        'the chart in the plain page',
        10_000,
      );
      expect(values(chart)).to.deep.equal(expected(chart, ids));
    } finally {
      frame.remove();
    }
  });

  it('shows a session-bound chart with the host cookie, and refuses it without', async () => {
    // biome-ignore lint/suspicious/noDocumentCookie: the host session cookie of this test page
    document.cookie = 'element_session=alice; path=/';
    try {
      const ids = await freshIds();
      const withCookie = mount({
        'query-id': ids.session,
        endpoint: config.edgeUrl,
        lazy: 'false',
        credentials: 'include',
      });
      await nextEvent(withCookie, 'analytics-chart-load', 8000);
      expect(values(withCookie)).to.deep.equal(expected(withCookie, ids));

      const without = mount(
        { 'query-id': ids.session, endpoint: config.edgeUrl, lazy: 'false' },
        { properties: { retryPolicy: { retries: 0, baseDelay: 1, maxDelay: 1 } } },
      );
      const error = await nextEvent<CustomEvent>(without, 'analytics-chart-error', 8000);
      expect(error.detail.code).to.equal('forbidden');
      expect(error.detail.status).to.equal(401);
    } finally {
      // biome-ignore lint/suspicious/noDocumentCookie: removes the cookie set above
      document.cookie = 'element_session=; path=/; max-age=0';
    }
  });

  it('renews an expired id through the edge and draws with the new one', async () => {
    // biome-ignore lint/suspicious/noDocumentCookie: the host session cookie of this test page
    document.cookie = 'element_session=alice; path=/';
    try {
      const ids = await freshIds();
      await sleep(1500); // `expiring` lives one second
      const el = mount({
        'query-id': ids.expiring,
        endpoint: config.edgeUrl,
        lazy: 'false',
        credentials: 'include',
      });
      const expired = nextEvent<CustomEvent>(el, 'analytics-chart-token-expired', 8000);
      const loaded = nextEvent<CustomEvent>(el, 'analytics-chart-load', 8000);
      expect((await expired).detail.queryId).to.equal(ids.expiring);
      await loaded;
      expect(el.queryId).to.be.a('string').and.not.equal(ids.expiring);
      expect(values(el)).to.deep.equal(expected(el, ids));
    } finally {
      // biome-ignore lint/suspicious/noDocumentCookie: removes the cookie set above
      document.cookie = 'element_session=; path=/; max-age=0';
    }
  });
});
