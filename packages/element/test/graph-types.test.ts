/**
 * Every graph type drawn from fixture payloads served by the fixture edge: the Chart.js instance's
 * datasets against the fixture (read separately), the DOM of the canvas-free types, and pixels
 * where the look is the point (dashed comparisons, stacked fills, dark background).
 */
import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import { expect } from 'chai';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import {
  chartOf,
  chartType,
  cleanup,
  fixture,
  frames,
  load,
  near,
  pixel,
  shadow,
} from './helpers.ts';

type Point = { x: number; y: number | null };

function dash(el: AnalyticsChart, dataset: number): number[] | undefined {
  return (chartOf(el).data.datasets[dataset] as { borderDash?: number[] } | undefined)?.borderDash;
}

function points(el: AnalyticsChart, dataset: number): Point[] {
  return (chartOf(el).data.datasets[dataset]?.data ?? []) as Point[];
}

function ys(el: AnalyticsChart, dataset: number): (number | null)[] {
  return points(el, dataset).map((p) => p.y);
}

function xs(el: AnalyticsChart, dataset: number): number[] {
  return points(el, dataset).map((p) => p.x);
}

function legendTexts(el: AnalyticsChart): string[] {
  return [...shadow(el).querySelectorAll('[part="legend"] button')].map((b) =>
    (b.textContent ?? '').trim(),
  );
}

/** Share of pixels along a horizontal line that differ clearly from the background. */
function inkAlong(el: AnalyticsChart, y: number, x0: number, x1: number): number {
  const bg = pixel(el, 1, 1);
  let ink = 0;
  let total = 0;
  for (let x = Math.ceil(x0); x <= Math.floor(x1); x++) {
    const p = pixel(el, x, y);
    const distance = Math.abs(p[0] - bg[0]) + Math.abs(p[1] - bg[1]) + Math.abs(p[2] - bg[2]);
    if (distance > 90) ink++;
    total++;
  }
  return ink / total;
}

describe('graph types', () => {
  afterEach(cleanup);

  it('Single Line: one line over the buckets, the previous window dashed on the same x positions', async () => {
    const payload = await fixture('single-line');
    const el = await load('single-line', { locale: 'en-US' });
    const chart = el.chart;
    expect(chart, 'a Chart.js instance').to.exist;
    expect(chartType(el)).to.equal('line');
    expect(chart?.data.datasets).to.have.length(2);
    expect(ys(el, 0)).to.deep.equal(payload.series[0]?.values);
    expect(ys(el, 1)).to.deep.equal(payload.compare?.series[0]?.values);
    expect(xs(el, 1)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
    expect(dash(el, 0)).to.equal(undefined);
    expect(dash(el, 1)).to.deep.equal([6, 4]);
    expect(chart?.data.datasets[1]?.label).to.equal('Count (previous period)');
    expect(legendTexts(el)).to.deep.equal(['Count', 'Count (previous period)']);
    // The x axis shows the bucket labels, formatted: `2024-03-01` → `Mar 1`.
    const ticks = chart?.scales.x?.ticks.map((t) => t.label) ?? [];
    expect(ticks).to.include('Mar 1');
    expect(shadow(el).querySelector('[part="title"]')?.textContent).to.equal('Sign-ups');
  });

  it('Multi Line: one solid line per series, each in its own palette color', async () => {
    const payload = await fixture('multi-line');
    const el = await load('multi-line');
    const datasets = el.chart?.data.datasets ?? [];
    expect(datasets.map((d) => d.label)).to.deep.equal(payload.series.map((s) => s.name));
    payload.series.forEach((s, i) => {
      expect(ys(el, i)).to.deep.equal(s.values);
    });
    const colors = new Set(datasets.map((d) => String(d.borderColor)));
    expect(colors.size).to.equal(3);
    expect(legendTexts(el)).to.deep.equal(['Chrome', 'Firefox', 'Safari']);
  });

  it('Stacked Line: stacked y axis and filled bands, each down to the series below', async () => {
    const el = await load('stacked-line', {}, { width: 500 });
    const chart = el.chart;
    expect(chart?.options.scales?.y).to.have.property('stacked', true);
    await frames(3);
    // free = 20 and pro = 10 in buckets 0-2 (30 in bucket 3): pro's line sits at 30 on the stacked axis.
    const y = chart?.scales.y;
    const x = chart?.getDatasetMeta(0).data[1]?.x ?? 0;
    const proLine = chart?.getDatasetMeta(1).data[1]?.y ?? 0;
    expect(Math.round(proLine)).to.equal(Math.round(y?.getPixelForValue(30) ?? -1));
    const inFree = pixel(el, x + 10, y?.getPixelForValue(10) ?? 0);
    const inPro = pixel(el, x + 10, y?.getPixelForValue(25) ?? 0);
    const above = pixel(el, x + 10, y?.getPixelForValue(34) ?? 0);
    const white = [255, 255, 255];
    // Each band is its line color at 35 % over the white background (computed by hand from the
    // default palette: #2563eb and #ea580c).
    const blend = (c: number[]) => c.map((v) => Math.round(v * 0.35 + 255 * 0.65));
    expect(near(inFree.slice(0, 3), blend([0x25, 0x63, 0xeb]), 6), `free band ${inFree}`).to.be
      .true;
    expect(near(inPro.slice(0, 3), blend([0xea, 0x58, 0x0c]), 6), `pro band ${inPro}`).to.be.true;
    expect(near(above.slice(0, 3), white, 3), `above the stack ${above}`).to.be.true;
  });

  it('Cumulative Line: a single line, no legend', async () => {
    const payload = await fixture('cumulative-line');
    const el = await load('cumulative-line');
    expect(el.chart?.data.datasets).to.have.length(1);
    expect(ys(el, 0)).to.deep.equal(payload.series[0]?.values);
    expect(shadow(el).querySelector('[part="legend"]')).to.equal(null);
  });

  it('Ratio Line: fractions drawn as they are, the axis in percent, gaps kept', async () => {
    const el = await load('ratio-line', { locale: 'en-US' });
    expect(ys(el, 0)).to.deep.equal([0.25, 0.5, null, 0.125]);
    const ticks = el.chart?.scales.y?.ticks.map((t) => t.label) ?? [];
    expect(ticks.length).to.be.greaterThan(1);
    for (const tick of ticks) expect(String(tick)).to.match(/%$/);
    expect(ticks).to.include('50%');
  });

  it('Compare Line: the compared population dashed; pixels show the dash', async () => {
    const el = await load('compare-line', {}, { width: 500 });
    const chart = el.chart;
    expect(chart?.data.datasets.map((d) => d.label)).to.deep.equal(['Count', 'Count (comparison)']);
    expect(dash(el, 1)).to.deep.equal([6, 4]);
    await frames(3);
    const solid = chart?.getDatasetMeta(0).data ?? [];
    const dashed = chart?.getDatasetMeta(1).data ?? [];
    const x0 = (solid[0]?.x ?? 0) + 6;
    const x1 = (solid[3]?.x ?? 0) - 6;
    const solidInk = inkAlong(el, Math.round(solid[1]?.y ?? 0), x0, x1);
    const dashedInk = inkAlong(el, Math.round(dashed[1]?.y ?? 0), x0, x1);
    expect(solidInk, 'solid line coverage').to.be.greaterThan(0.9);
    expect(dashedInk, 'dashed line coverage').to.be.within(0.3, 0.8);
  });

  it('an incomplete last bucket (today so far) is joined by a dashed segment; the rest stay solid', async () => {
    const el = await load('today-so-far', {}, { width: 500 });
    await frames(3);
    // A flat line at 20: measure the ink along it, segment by segment.
    const points = el.chart?.getDatasetMeta(0).data ?? [];
    const y = Math.round(points[0]?.y ?? 0);
    const between = (a: number, b: number) =>
      inkAlong(el, y, (points[a]?.x ?? 0) + 6, (points[b]?.x ?? 0) - 6);
    expect(between(0, 1), 'first segment').to.be.greaterThan(0.9);
    expect(between(2, 3), 'a middle segment').to.be.greaterThan(0.9);
    expect(between(3, 4), 'the segment into the partial bucket').to.be.within(0.2, 0.75);
  });

  it('Bar Chart: one bar per label', async () => {
    const payload = await fixture('bar');
    const el = await load('bar');
    expect(chartType(el)).to.equal('bar');
    expect(el.chart?.data.labels).to.deep.equal(payload.labels);
    expect(el.chart?.data.datasets[0]?.data).to.deep.equal(payload.series[0]?.values);
    expect(el.chart?.getDatasetMeta(0).data).to.have.length(3);
  });

  it('Pie Chart: one slice per label in palette order; `doughnut` cuts out the middle', async () => {
    const payload = await fixture('pie');
    const pie = await load('pie');
    expect(chartType(pie)).to.equal('pie');
    expect(pie.chart?.data.datasets[0]?.data).to.deep.equal(payload.series[0]?.values);
    const colors = pie.chart?.data.datasets[0]?.backgroundColor as string[];
    expect(new Set(colors).size).to.equal(3);
    expect(legendTexts(pie)).to.deep.equal(['free', 'pro', 'team']);
    const doughnut = await load('pie', { doughnut: '' });
    expect(chartType(doughnut)).to.equal('doughnut');
    expect(doughnut.chart?.options).to.have.property('cutout', '55%');
    // The slices of the doughnut have a hole: their inner radius is above zero.
    const arc = chartOf(doughnut).getDatasetMeta(0).data[0] as unknown as { innerRadius: number };
    expect(arc.innerRadius).to.be.greaterThan(0);
  });

  it('Funnel: horizontal bars, each step labelled with its conversion from the previous one', async () => {
    const el = await load('funnel', { locale: 'en-US' });
    const chart = el.chart;
    expect(chart?.options.indexAxis).to.equal('y');
    expect(chart?.data.datasets[0]?.data).to.deep.equal([1000, 250, 50]);
    // 250 / 1000 = 25 %, 50 / 250 = 20 % (by hand).
    const labels = chart?.scales.y?.ticks.map((t) => t.label);
    expect(labels).to.deep.equal([
      'Visit',
      ['Sign up', '25% of previous'],
      ['Purchase', '20% of previous'],
    ]);
  });

  it('Single Value: a big number and an upward delta, no canvas', async () => {
    const el = await load('single-value', { locale: 'en-US' });
    const root = shadow(el);
    expect(el.chart).to.equal(undefined);
    expect(root.querySelector('.chart')?.hasAttribute('hidden')).to.be.true;
    expect(root.querySelector('[part="value"]')?.textContent?.trim()).to.equal('1,250');
    const delta = root.querySelector('[part="delta"]');
    expect(delta?.classList.contains('up')).to.be.true;
    // 1250 against 1000: +25 %.
    expect(delta?.textContent?.replace(/\s+/g, ' ').trim()).to.equal(
      '▲ Up 25% vs 1,000 in the previous period',
    );
  });

  it('Single Value: a downward delta with the down sign', async () => {
    const el = await load('single-value-down', { locale: 'en-US' });
    const delta = shadow(el).querySelector('[part="delta"]');
    expect(delta?.classList.contains('down')).to.be.true;
    expect(delta?.textContent?.replace(/\s+/g, ' ').trim()).to.equal(
      '▼ Down 20% vs 100 in the previous period',
    );
  });

  it('Table: a semantic table with header cells and formatted numbers', async () => {
    const payload = await fixture('table');
    const el = await load('table', { locale: 'en-US' });
    const table = shadow(el).querySelector('table[part="table"]');
    expect(table).to.exist;
    expect(
      [...(table?.querySelectorAll('thead th[scope="col"]') ?? [])].map((t) => t.textContent),
    ).to.deep.equal(payload.columns);
    const rows = [...(table?.querySelectorAll('tbody tr') ?? [])].map((r) =>
      [...r.querySelectorAll('td')].map((td) => td.textContent),
    );
    expect(rows).to.deep.equal([
      ['/home', '120'],
      ['/pricing', '45'],
      ['/docs', '7'],
    ]);
    expect(table?.querySelector('tbody td:nth-child(2)')?.classList.contains('number')).to.be.true;
    expect(el.chart).to.equal(undefined);
  });

  it('Samples: timestamps formatted in the payload zone, events as JSON', async () => {
    const el = await load('samples', { locale: 'en-US' });
    const cells = [...shadow(el).querySelectorAll('tbody tr:first-child td')].map((td) =>
      (td.textContent ?? '').replace(/\s+/g, ' '),
    );
    // 1709647200 = 2024-03-05T14:00:00Z = 9:00 in New York (EST, UTC−5).
    expect(cells[0]).to.equal('Mar 5, 2024, 9:00:00 AM');
    expect(cells[1]).to.equal('{"event":"signup","plan":"pro"}');
  });

  it('draws on a light background by default and a dark one with theme="dark"', async () => {
    const light = await load('bar');
    await frames(2);
    expect(near(pixel(light, 2, 2).slice(0, 3), [255, 255, 255], 2)).to.be.true;
    const dark = await load('bar', { theme: 'dark' });
    await frames(2);
    expect(near(pixel(dark, 2, 2).slice(0, 3), [0x0d, 0x11, 0x17], 2)).to.be.true;
  });

  it('the payload it fired matches what the edge sent', async () => {
    const expected: ChartPayload = await fixture('multi-line');
    const el = document.createElement('analytics-chart');
    el.setAttribute('query-id', 'multi-line');
    el.setAttribute('endpoint', '/');
    const loaded = new Promise<CustomEvent>((resolve) =>
      el.addEventListener('analytics-chart-load', (e) => resolve(e), { once: true }),
    );
    document.body.append(el);
    const event = await loaded;
    el.remove();
    expect(event.detail.payload).to.deep.equal(expected);
    expect(event.bubbles && event.composed).to.be.true;
  });
});
