/**
 * The pure parts, by table: payload → Chart.js config, payload → table / CSV / summary / legend /
 * tooltip text, formatting per locale and zone, conversions, deltas, Retry-After, backoff. Expected
 * values are worked out by hand from the inputs.
 */
import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import { expect } from 'chai';
import { describePoints } from '../src/accessibility/describe-points.ts';
import { pointIndexForKey } from '../src/accessibility/point-key.ts';
import { summarizeChart } from '../src/accessibility/summarize-chart.ts';
import { toDataTable } from '../src/accessibility/to-data-table.ts';
import { createFormatters, parseBucketLabel } from '../src/chart/chart-formatters.ts';
import { compareDelta } from '../src/chart/compare-delta.ts';
import { funnelSteps } from '../src/chart/funnel-steps.ts';
import { legendItems } from '../src/chart/legend-items.ts';
import type { ChartTheme } from '../src/chart/resolve-theme.ts';
import { POINT_MARKER_LIMIT, toChartConfig } from '../src/chart/to-chart-config.ts';
import { parseRetryAfter, toChartLoadError } from '../src/data/chart-load-error.ts';
import { isEmptyPayload } from '../src/data/payload-shape.ts';
import { edgeUrl, isChartPayload } from '../src/data/request-chart-data.ts';
import { retryDelay } from '../src/data/retry-delay.ts';
import { exportFileName } from '../src/export/download-file.ts';
import { toCsv } from '../src/export/to-csv.ts';
import { cleanup, fixture, load, mount, nextEvent, shadow } from './helpers.ts';

const THEME: ChartTheme = {
  palette: ['#111111', '#222222', '#333333'],
  paletteFill: ['rgba(1, 1, 1, 0.35)', 'rgba(2, 2, 2, 0.35)', 'rgba(3, 3, 3, 0.35)'],
  text: '#000000',
  muted: '#444444',
  grid: '#dddddd',
  background: '#ffffff',
  fontFamily: 'serif',
  fontSize: 13,
};
const F = createFormatters('en-US', 'UTC');
const options = { theme: THEME, formatters: F, doughnut: false, animate: false };

function payload(p: Partial<ChartPayload>): ChartPayload {
  return {
    graph: 'Single Line',
    timeZone: 'UTC',
    labels: [],
    series: [],
    generatedAt: '2024-03-08T00:00:00.000Z',
    expiresAt: '2024-03-08T00:01:00.000Z',
    ...p,
  };
}

describe('toChartConfig', () => {
  it('gives each graph type its Chart.js type and datasets', async () => {
    const cases: [string, string, number][] = [
      ['single-line', 'line', 2],
      ['multi-line', 'line', 3],
      ['stacked-line', 'line', 2],
      ['cumulative-line', 'line', 1],
      ['ratio-line', 'line', 1],
      ['compare-line', 'line', 2],
      ['bar', 'bar', 1],
      ['pie', 'pie', 1],
      ['funnel', 'bar', 1],
    ];
    for (const [name, type, datasets] of cases) {
      const config = toChartConfig(await fixture(name), options);
      expect(config?.type, name).to.equal(type);
      expect(config?.data.datasets, name).to.have.length(datasets);
    }
    for (const name of ['single-value', 'table', 'samples']) {
      expect(toChartConfig(await fixture(name), options), name).to.equal(null);
    }
  });

  it('colors series from the palette in order and cycles it', () => {
    const config = toChartConfig(
      payload({
        graph: 'Multi Line',
        labels: ['2024-03-01'],
        series: ['a', 'b', 'c', 'd'].map((name) => ({ name, values: [1] })),
      }),
      options,
    );
    expect(config?.data.datasets.map((d) => d.borderColor)).to.deep.equal([
      '#111111',
      '#222222',
      '#333333',
      '#111111',
    ]);
  });

  it('stacks Stacked Line, fills through the stack-fill plugin, and never decimates it', async () => {
    const config = toChartConfig(await fixture('stacked-line'), options);
    const plugins = config?.options?.plugins as Record<
      string,
      { enabled?: boolean; colors?: string[] }
    >;
    expect((config?.options?.scales?.y as { stacked?: boolean } | undefined)?.stacked).to.be.true;
    expect(plugins.analyticsChartStackFill?.colors).to.deep.equal(THEME.paletteFill.slice(0, 2));
    expect(plugins.decimation?.enabled).to.be.false;
    const single = toChartConfig(await fixture('single-line'), options);
    const singlePlugins = single?.options?.plugins as Record<
      string,
      { enabled?: boolean; colors?: string[] }
    >;
    expect(singlePlugins.decimation?.enabled).to.be.true;
    expect(singlePlugins.analyticsChartStackFill?.colors).to.deep.equal([]);
  });

  it('drops point markers on dense lines', () => {
    const make = (n: number) =>
      toChartConfig(
        payload({
          labels: Array.from({ length: n }, (_, i) => `l${i}`),
          series: [{ name: 'C', values: Array(n).fill(1) }],
        }),
        options,
      );
    expect(
      (make(POINT_MARKER_LIMIT)?.data.datasets[0] as { pointRadius?: number } | undefined)
        ?.pointRadius,
    ).to.be.greaterThan(0);
    expect(
      (make(POINT_MARKER_LIMIT + 1)?.data.datasets[0] as { pointRadius?: number } | undefined)
        ?.pointRadius,
    ).to.equal(0);
  });

  it('cuts the compare series to the current window length (same x positions)', () => {
    const config = toChartConfig(
      payload({
        labels: ['a', 'b'],
        series: [{ name: 'Count', values: [1, 2] }],
        compare: { labels: ['x', 'y', 'z'], series: [{ name: 'Count', values: [3, 4, 5] }] },
      }),
      options,
    );
    expect(config?.data.datasets[1]?.data).to.deep.equal([
      { x: 0, y: 3 },
      { x: 1, y: 4 },
    ]);
  });
});

describe('formatters', () => {
  it('reads bucket labels of each granularity', () => {
    expect(parseBucketLabel('2024-03')?.precision).to.equal('month');
    expect(parseBucketLabel('2024-03-05')?.date.toISOString()).to.equal('2024-03-05T00:00:00.000Z');
    expect(parseBucketLabel('2024-03-05 14:07')?.date.toISOString()).to.equal(
      '2024-03-05T14:07:00.000Z',
    );
    expect(parseBucketLabel('Chrome')).to.equal(null);
  });

  it('formats labels as written (no zone shift) and timestamps in the payload zone', () => {
    const berlin = createFormatters('en-US', 'Europe/Berlin');
    // Labels are wall-clock already: 14:00 stays 14:00 whatever the zone.
    expect(berlin.longLabel('2024-03-05 14:00').replace(/\s/g, ' ')).to.equal(
      'Mar 5, 2024, 2:00 PM',
    );
    expect(berlin.shortLabel('2024-03')).to.equal('Mar 2024');
    expect(berlin.shortLabel('/pricing')).to.equal('/pricing');
    // 1709647200 = 14:00 UTC = 15:00 in Berlin (CET).
    expect(berlin.timestamp(1709647200).replace(/\s/g, ' ')).to.equal('Mar 5, 2024, 3:00:00 PM');
  });

  it('keeps one formatter set per locale and zone, and a bounded number of them', () => {
    const first = createFormatters('en-GB', 'Asia/Tokyo');
    expect(createFormatters('en-GB', 'Asia/Tokyo')).to.equal(first);
    // Sixteen other pairs push the oldest out: asked again, it is built anew.
    const zones = Intl.supportedValuesOf('timeZone').filter((z) => z !== 'Asia/Tokyo');
    for (const zone of zones.slice(0, 16)) createFormatters('en-GB', zone);
    expect(createFormatters('en-GB', 'Asia/Tokyo')).to.not.equal(first);
  });

  it('formats numbers and percentages for the locale', () => {
    const de = createFormatters('de-DE', 'UTC');
    expect(de.number(1234.5)).to.equal('1.234,5');
    expect(de.percent(0.125)).to.equal('12,5\u00a0%');
    expect(de.longLabel('2024-03-05')).to.equal('05.03.2024');
    expect(F.axisNumber(12_300)).to.equal('12.3K');
    expect(F.number(null)).to.equal('–');
  });
});

describe('tables, CSV, summaries', () => {
  it('puts Funnel conversions beside the steps', async () => {
    expect(funnelSteps(['a', 'b', 'c'], [1000, 250, 50])).to.deep.equal([
      { label: 'a', value: 1000, fromPrevious: null, fromFirst: 1 },
      { label: 'b', value: 250, fromPrevious: 0.25, fromFirst: 0.25 },
      { label: 'c', value: 50, fromPrevious: 0.2, fromFirst: 0.05 },
    ]);
    expect(funnelSteps(['a', 'b'], [0, 5])[1]).to.deep.equal({
      label: 'b',
      value: 5,
      fromPrevious: null,
      fromFirst: null,
    });
    expect(toCsv(toDataTable(await fixture('funnel')))).to.equal(
      'Step,Users,From previous step,From first step\r\nVisit,1000,,1\r\nSign up,250,0.25,0.25\r\nPurchase,50,0.2,0.05\r\n',
    );
  });

  it('quotes CSV fields and defuses spreadsheet formulas in text', () => {
    const csv = toCsv({
      columns: [
        { name: 'page', kind: 'text' },
        { name: 'n', kind: 'number' },
      ],
      rows: [
        ['=HYPERLINK("x")', -5],
        ['a,b', null],
        ['line\nbreak', 1.5],
      ],
    });
    expect(csv).to.equal('page,n\r\n"\'=HYPERLINK(""x"")",-5\r\n"a,b",\r\n"line\nbreak",1.5\r\n');
  });

  it('computes deltas against the comparison', () => {
    expect(compareDelta(1250, 1000)).to.deep.equal({
      direction: 'up',
      relative: 0.25,
      absolute: 250,
    });
    expect(compareDelta(80, 100)).to.deep.equal({
      direction: 'down',
      relative: -0.2,
      absolute: -20,
    });
    expect(compareDelta(5, 0)).to.deep.equal({ direction: 'up', relative: null, absolute: 5 });
    expect(compareDelta(5, null)).to.equal(null);
    expect(compareDelta(-50, -100)?.relative).to.equal(0.5);
  });

  it('summarizes each view', async () => {
    expect(summarizeChart(await fixture('bar'), F)).to.equal(
      'Events by page. Bar Chart. Count: largest 120 (/home), smallest 7 (/docs).',
    );
    expect(summarizeChart(await fixture('single-value-down'), F)).to.equal(
      'Errors. Single Value. Value 80. Down 20% from the previous period (100).',
    );
    expect(summarizeChart(await fixture('table'), F)).to.equal(
      'Top pages. Table. Table with 3 rows and 2 columns.',
    );
    expect(summarizeChart(await fixture('ratio-line'), F)).to.equal(
      'Conversion. Ratio Line from Mar 1, 2024 to Mar 4, 2024. Ratio: highest 50% (Mar 2, 2024), lowest 12.5% (Mar 4, 2024).',
    );
    expect(summarizeChart(await fixture('empty'), F)).to.equal(
      'Nothing. Single Line. No data for this period.',
    );
  });

  it('knows empty payloads: no buckets, no rows, only nulls; zeros are data', () => {
    expect(isEmptyPayload(payload({ labels: [] }))).to.be.true;
    expect(isEmptyPayload(payload({ labels: ['a'], series: [{ name: 'x', values: [null] }] }))).to
      .be.true;
    expect(isEmptyPayload(payload({ labels: ['a'], series: [{ name: 'x', values: [0] }] }))).to.be
      .false;
    expect(isEmptyPayload(payload({ graph: 'Table', rows: [] }))).to.be.true;
    expect(isEmptyPayload(payload({ graph: 'Single Value', value: null }))).to.be.true;
    expect(isEmptyPayload(payload({ graph: 'Single Value', value: 0 }))).to.be.false;
  });

  it('names legend entries, dashing comparisons; none for one series or a funnel', async () => {
    expect(legendItems(await fixture('single-line'))).to.deep.equal([
      { label: 'Count', color: 0, dashed: false },
      { label: 'Count (previous period)', color: 0, dashed: true },
    ]);
    expect(legendItems(await fixture('cumulative-line'))).to.deep.equal([]);
    expect(legendItems(await fixture('funnel'))).to.deep.equal([]);
    expect(legendItems(await fixture('pie')).map((i) => i.label)).to.deep.equal([
      'free',
      'pro',
      'team',
    ]);
  });

  it('describes decimated points by their bucket, not their drawn index', async () => {
    const p = await fixture('single-line');
    // After decimation, drawn element 1 of dataset 0 is bucket 3.
    const drawn = [{ data: [{ x: 0 }, { x: 3 }] }, { data: [{ x: 0 }, { x: 3 }] }];
    const d = describePoints(
      p,
      [
        { datasetIndex: 0, index: 1 },
        { datasetIndex: 1, index: 1 },
      ],
      drawn,
      F,
    );
    expect(d).to.deep.equal({
      title: 'Mar 4, 2024',
      rows: [
        { name: 'Count', value: '12', color: 0, dashed: false },
        { name: 'Count (previous period)', value: '10', color: 0, dashed: true },
      ],
      notes: ['Previous period: Feb 26, 2024'],
    });
    const funnel = describePoints(await fixture('funnel'), [{ datasetIndex: 0, index: 2 }], [], F);
    expect(funnel?.notes).to.deep.equal(['From previous step: 20%', 'From first step: 5%']);
    const pie = describePoints(await fixture('pie'), [{ datasetIndex: 0, index: 1 }], [], F);
    expect(pie?.rows[0]?.value).to.equal('30 (30%)');
  });
});

describe('wire details', () => {
  it('resolves edge routes below the endpoint, with or without a trailing slash', () => {
    const base = 'https://host.example/page/index.html';
    expect(edgeUrl('https://edge.example/analytics', 'api/data', base).href).to.equal(
      'https://edge.example/analytics/api/data',
    );
    expect(edgeUrl('https://edge.example/analytics/', 'api/data', base).href).to.equal(
      'https://edge.example/analytics/api/data',
    );
    expect(edgeUrl('/edge', 'api/renew', base).href).to.equal(
      'https://host.example/edge/api/renew',
    );
    expect(edgeUrl('/', 'api/data', base).href).to.equal('https://host.example/api/data');
  });

  it('reads Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('30')).to.equal(30);
    expect(
      parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')),
    ).to.equal(10);
    expect(parseRetryAfter('soon')).to.equal(undefined);
    expect(parseRetryAfter(null)).to.equal(undefined);
  });

  it('maps failures to codes: the body first, the status otherwise', () => {
    expect(
      toChartLoadError(401, { error: 'The query id has expired.', code: 'expired' }, null),
    ).to.deep.equal({
      status: 401,
      code: 'expired',
      message: 'The query id has expired.',
    });
    expect(toChartLoadError(403, '<html>', null).code).to.equal('forbidden');
    const byStatus: [number, string][] = [
      [400, 'bad_request'],
      [401, 'invalid'],
      [404, 'not_found'],
      [429, 'rate_limited'],
      [502, 'backend'],
      [503, 'backend'],
      [504, 'timeout'],
      [500, 'backend'],
    ];
    for (const [status, code] of byStatus)
      expect(toChartLoadError(status, undefined, null).code, String(status)).to.equal(code);
    // A code the contract does not know, even one every object inherits, leaves it to the status.
    expect(toChartLoadError(404, { error: 'x', code: 'teapot' }, null).code).to.equal('not_found');
    expect(toChartLoadError(404, { error: 'x', code: 'toString' }, null).code).to.equal(
      'not_found',
    );
    expect(
      toChartLoadError(429, { error: 'Slow down.', code: 'rate_limited' }, '7').retryAfter,
    ).to.equal(7);
    expect(toChartLoadError(418, undefined, null).code).to.equal('unknown');
  });

  it('backs off exponentially within ±20 %, capped', () => {
    const policy = { retries: 5, baseDelay: 1000, maxDelay: 5000 };
    expect(retryDelay(0, policy, () => 0)).to.equal(800);
    expect(retryDelay(0, policy, () => 1)).to.equal(1200);
    expect(retryDelay(2, policy, () => 0.5)).to.equal(4000);
    expect(retryDelay(5, policy, () => 0.5)).to.equal(5000);
  });

  it('accepts only bodies shaped like a chart payload', async () => {
    expect(isChartPayload(await fixture('single-line'))).to.be.true;
    expect(isChartPayload({ graph: 'Bar Chart', labels: [], series: [] })).to.be.false;
    expect(isChartPayload({ ...(await fixture('bar')), series: [{ name: 1, values: [] }] })).to.be
      .false;
    expect(isChartPayload(null)).to.be.false;
  });
});

describe('keyboard and file names', () => {
  it('moves the active point by key and stops at the ends', () => {
    // [key, current, count, expected]; -1 means no point is active yet.
    const cases: [string, number, number, number | 'clear' | undefined][] = [
      ['ArrowRight', -1, 5, 0],
      ['ArrowRight', 2, 5, 3],
      ['ArrowDown', 4, 5, 4],
      ['ArrowLeft', 3, 5, 2],
      ['ArrowUp', 0, 5, 0],
      ['ArrowLeft', -1, 5, 0],
      ['Home', 3, 5, 0],
      ['End', 0, 5, 4],
      ['Escape', 2, 5, 'clear'],
      ['Tab', 2, 5, undefined],
      ['a', 2, 5, undefined],
    ];
    for (const [key, current, count, expected] of cases)
      expect(pointIndexForKey(key, current, count), `${key} from ${current}`).to.equal(expected);
  });

  it('names export files after the title, in any script, or "chart"', () => {
    expect(exportFileName('Sign-ups per day')).to.equal('sign-ups-per-day');
    expect(exportFileName('  Umsätze — März 2024!')).to.equal('umsätze-märz-2024');
    expect(exportFileName('注册 / 每日')).to.equal('注册-每日');
    expect(exportFileName('!!!')).to.equal('chart');
    expect(exportFileName(undefined)).to.equal('chart');
    expect(exportFileName('a'.repeat(80))).to.have.length(60);
  });
});

describe('locale in the element', () => {
  afterEach(cleanup);

  it('formats with the locale attribute', async () => {
    const el = await load('hourly', { locale: 'de-DE' });
    el.shadowRoot?.querySelector<HTMLButtonElement>('[part="toolbar"] button')?.click();
    await el.updateComplete;
    const first = [...shadow(el).querySelectorAll('tbody tr:first-child td')].map(
      (td) => td.textContent,
    );
    expect(first).to.deep.equal(['05.03.2024, 13:00', '1.234,5']);
  });

  it('falls back to the nearest lang attribute', async () => {
    const el = mount({ 'query-id': 'single-value', endpoint: '/', lazy: 'false' });
    el.parentElement?.setAttribute('lang', 'fr-FR');
    await nextEvent(el, 'analytics-chart-load');
    await el.updateComplete;
    const value = shadow(el).querySelector('[part="value"]')?.textContent ?? '';
    // French groups thousands with a narrow no-break space.
    expect(value.trim()).to.equal('1\u202f250');
  });
});
