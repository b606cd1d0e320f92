/**
 * Accessibility: axe-core finds no violations in any view or state, in both themes; the canvas
 * is an image with a summary; the data is reachable as a table; the keyboard walks the points and
 * a live region reads them; the legend toggles series.
 */
import { sendKeys, sendMouse } from '@web/test-runner-commands';
import type { AxeResults, RunOptions } from 'axe-core';
import { expect } from 'chai';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import { chartOf, cleanup, frames, load, mount, nextEvent, shadow } from './helpers.ts';

declare global {
  interface Window {
    axe: { run(context: Element, options?: RunOptions): Promise<AxeResults> };
  }
}

await import('axe-core/axe.js');

async function violations(el: Element): Promise<string[]> {
  const results = await window.axe.run(el, { resultTypes: ['violations'] });
  return results.violations.map(
    (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
  );
}

describe('accessibility', () => {
  afterEach(cleanup);

  const VIEWS: [string, Record<string, string>][] = [
    ['single-line', {}],
    ['multi-line', { theme: 'dark' }],
    ['stacked-line', {}],
    ['ratio-line', {}],
    ['bar', { export: '' }],
    ['pie', { doughnut: '' }],
    ['funnel', { theme: 'dark' }],
    ['single-value', {}],
    ['single-value-down', { theme: 'dark' }],
    ['table', {}],
    ['samples', { theme: 'dark' }],
    ['empty', {}],
  ];
  for (const [name, attributes] of VIEWS) {
    it(`has no axe violations: ${name} ${JSON.stringify(attributes)}`, async () => {
      const el = await load(name, attributes);
      await frames(1);
      expect(await violations(el)).to.deep.equal([]);
    });
  }

  it('has no axe violations while loading, or in the error state (both themes)', async () => {
    const loading = mount({ 'query-id': 'bar;delay=2000', endpoint: '/', lazy: 'false' });
    await loading.updateComplete;
    expect(await violations(loading)).to.deep.equal([]);
    for (const theme of ['light', 'dark']) {
      const failing = mount(
        { 'query-id': 'bar;fail=backend', endpoint: '/', lazy: 'false', theme },
        { properties: { retryPolicy: { retries: 0, baseDelay: 1, maxDelay: 1 } } },
      );
      await nextEvent(failing, 'analytics-chart-error');
      await failing.updateComplete;
      expect(await violations(failing)).to.deep.equal([]);
    }
  });

  it('has no axe violations with the data table shown and a series switched off', async () => {
    const el = await load('multi-line', { export: '' });
    const buttons = shadow(el).querySelectorAll<HTMLButtonElement>('[part="legend"] button');
    buttons[1]?.click();
    const toggle = [
      ...shadow(el).querySelectorAll<HTMLButtonElement>('[part="toolbar"] button'),
    ].find((b) => b.textContent?.trim() === 'Data table');
    toggle?.click();
    await el.updateComplete;
    expect(await violations(el)).to.deep.equal([]);
  });

  it('labels the canvas as an image with title, window and extremes', async () => {
    const el = await load('single-line', { locale: 'en-US' });
    const canvas = shadow(el).querySelector('canvas');
    expect(canvas?.getAttribute('role')).to.equal('img');
    expect(canvas?.tabIndex).to.equal(0);
    // Hand-read from the fixture: max 12 on Mar 4, min 0 on Mar 3; the previous window is not
    // summarized beyond its own extremes (max 10 on Mar 4, min 1 on Mar 3).
    expect(canvas?.getAttribute('aria-label')).to.equal(
      'Sign-ups. Single Line from Mar 1, 2024, 12:00 AM to Mar 8, 2024, 12:00 AM. ' +
        'Count: highest 12 (Mar 4, 2024), lowest 0 (Mar 3, 2024).',
    );
  });

  it('shows the data as a table on request', async () => {
    const el = await load('single-line', { locale: 'en-US' });
    const toggle = shadow(el).querySelector<HTMLButtonElement>('[part="toolbar"] button');
    expect(toggle?.textContent?.trim()).to.equal('Data table');
    expect(toggle?.getAttribute('aria-pressed')).to.equal('false');
    toggle?.click();
    await el.updateComplete;
    expect(toggle?.getAttribute('aria-pressed')).to.equal('true');
    const table = shadow(el).querySelector('table[part="table"]');
    const headers = [...(table?.querySelectorAll('th') ?? [])].map((th) => th.textContent);
    expect(headers).to.deep.equal([
      'Time',
      'Count',
      'Previous period time',
      'Count (previous period)',
    ]);
    const first = [...(table?.querySelectorAll('tbody tr:first-child td') ?? [])].map(
      (td) => td.textContent,
    );
    expect(first).to.deep.equal(['Mar 1, 2024', '5', 'Feb 23, 2024', '4']);
    expect(table?.querySelectorAll('tbody tr')).to.have.length(7);
    expect(shadow(el).querySelector('.chart')?.hasAttribute('hidden')).to.be.true;
  });

  it('walks the points with the arrow keys and announces them', async () => {
    const el = await load('single-line', { locale: 'en-US' });
    shadow(el).querySelector('canvas')?.focus();
    await sendKeys({ press: 'ArrowRight' });
    await el.updateComplete;
    const live = shadow(el).querySelector('[aria-live="polite"]');
    expect(live?.textContent).to.equal(
      'Mar 1, 2024. Count: 5. Count (previous period): 4. Previous period: Feb 23, 2024',
    );
    expect(shadow(el).querySelector('[part="tooltip"] .tooltip-title')?.textContent).to.equal(
      'Mar 1, 2024',
    );
    await sendKeys({ press: 'ArrowRight' });
    await sendKeys({ press: 'ArrowRight' });
    await el.updateComplete;
    expect(live?.textContent).to.match(/^Mar 3, 2024\. Count: 0\./);
    await sendKeys({ press: 'End' });
    await el.updateComplete;
    expect(live?.textContent).to.match(/^Mar 7, 2024\. Count: 9\./);
    expect(
      chartOf(el)
        .getActiveElements()
        .map((a) => a.index),
    ).to.deep.equal([6, 6]);
    await sendKeys({ press: 'Escape' });
    await el.updateComplete;
    expect(shadow(el).querySelector('[part="tooltip"]')).to.equal(null);
    expect(chartOf(el).getActiveElements()).to.deep.equal([]);
  });

  it('shows a tooltip for the point under the mouse', async () => {
    const el = await load('bar', { locale: 'en-US' });
    await frames(2);
    const chart = chartOf(el);
    const bar = chart.getDatasetMeta(0).data[1];
    const rect = shadow(el).querySelector('canvas')?.getBoundingClientRect();
    if (!bar || !rect) throw new Error('no bar');
    await sendMouse({
      type: 'move',
      position: [
        Math.round(rect.left + bar.x),
        Math.round(rect.top + (bar.y + chart.chartArea.bottom) / 2),
      ],
    });
    await frames(2);
    await el.updateComplete;
    const tip = shadow(el).querySelector('[part="tooltip"]');
    expect(tip?.querySelector('.tooltip-title')?.textContent).to.equal('/pricing');
    const row = [...(tip?.querySelectorAll('.tooltip-row span') ?? [])].map((s) => s.textContent);
    expect(row).to.deep.equal(['', 'Count', '45']);
    await sendMouse({ type: 'move', position: [0, 0] });
  });

  it('switches a series off and on from the legend', async () => {
    const el = await load('multi-line');
    const buttons = shadow(el).querySelectorAll<HTMLButtonElement>('[part="legend"] button');
    expect(buttons).to.have.length(3);
    buttons[1]?.click();
    await el.updateComplete;
    expect(chartOf(el).isDatasetVisible(1)).to.be.false;
    expect(buttons[1]?.getAttribute('aria-pressed')).to.equal('false');
    buttons[1]?.click();
    await el.updateComplete;
    expect(chartOf(el).isDatasetVisible(1)).to.be.true;
  });

  it('keeps a switched-off series off when the data refreshes', async () => {
    const el: AnalyticsChart = await load('multi-line');
    shadow(el).querySelectorAll<HTMLButtonElement>('[part="legend"] button')[2]?.click();
    const loaded = nextEvent(el, 'analytics-chart-load');
    el.range = 'again';
    await loaded;
    expect(chartOf(el).isDatasetVisible(2)).to.be.false;
    expect(chartOf(el).isDatasetVisible(0)).to.be.true;
  });
});
