/**
 * Look: light and dark themes, `auto` following prefers-color-scheme live, the
 * `--analytics-chart-*` properties reaching the canvas, and prefers-reduced-motion.
 */
import { emulateMedia } from '@web/test-runner-commands';
import { expect } from 'chai';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import { chartOf, cleanup, frames, load, near, nextEvent, pixel, until } from './helpers.ts';

const WHITE = [255, 255, 255];
const DARK = [0x0d, 0x11, 0x17];

function background(el: AnalyticsChart): number[] {
  return pixel(el, 2, 2).slice(0, 3);
}

function xTicks(el: AnalyticsChart) {
  return chartOf(el).options.scales?.x?.ticks as { color?: string; font?: { family?: string } };
}

describe('theme', () => {
  afterEach(async () => {
    cleanup();
    await emulateMedia({ colorScheme: 'light', reducedMotion: 'no-preference' });
  });

  it('switches between light and dark on the same chart', async () => {
    const el = await load('bar', { theme: 'light' });
    const chart = el.chart;
    await frames(2);
    expect(near(background(el), WHITE, 2)).to.be.true;
    expect(xTicks(el).color).to.equal('#59636e');
    el.theme = 'dark';
    await el.updateComplete;
    await frames(2);
    expect(el.chart).to.equal(chart);
    expect(near(background(el), DARK, 2)).to.be.true;
    expect(xTicks(el).color).to.equal('#9198a1');
    expect(el.getAttribute('theme')).to.equal('dark');
  });

  it('auto follows prefers-color-scheme, live', async () => {
    await emulateMedia({ colorScheme: 'dark' });
    const el = await load('bar', { theme: 'auto' });
    await frames(2);
    expect(near(background(el), DARK, 2)).to.be.true;
    await emulateMedia({ colorScheme: 'light' });
    await until(() => near(background(el), WHITE, 2), 'the light background');
    await emulateMedia({ colorScheme: 'dark' });
    await until(() => near(background(el), DARK, 2), 'the dark background again');
  });

  it('light and dark ignore the color scheme', async () => {
    await emulateMedia({ colorScheme: 'dark' });
    const el = await load('bar', { theme: 'light' });
    await frames(2);
    expect(near(background(el), WHITE, 2)).to.be.true;
  });

  it('reads palette, background, text, grid and font from --analytics-chart-* properties', async () => {
    const el = await load('multi-line', {
      style: [
        '--analytics-chart-color-1: rgb(255, 0, 0)',
        '--analytics-chart-color-2: hsl(120 100% 25%)',
        '--analytics-chart-background: #fffbe6',
        '--analytics-chart-text: rgb(10, 20, 30)',
        '--analytics-chart-muted: rgb(1, 2, 3)',
        '--analytics-chart-grid: rgb(200, 0, 200)',
        '--analytics-chart-font: Georgia, serif',
      ].join(';'),
    });
    await frames(2);
    const chart = chartOf(el);
    expect(chart.data.datasets[0]?.borderColor).to.equal('rgb(255, 0, 0)');
    expect(chart.data.datasets[1]?.borderColor).to.equal('hsl(120 100% 25%)');
    expect(xTicks(el).color).to.equal('rgb(1, 2, 3)');
    expect(xTicks(el).font?.family).to.equal('Georgia, serif');
    expect((chart.options.scales?.y?.grid as { color?: string } | undefined)?.color).to.equal(
      'rgb(200, 0, 200)',
    );
    expect(near(background(el), [0xff, 0xfb, 0xe6], 2)).to.be.true;
    // The HTML around the canvas uses the same properties.
    const base = el.shadowRoot?.querySelector('[part="base"]') as HTMLElement;
    expect(getComputedStyle(base).color).to.equal('rgb(10, 20, 30)');
    // The legend swatch of series 1 is the first palette color.
    const swatch = el.shadowRoot?.querySelector('[part="legend"] .swatch') as HTMLElement;
    expect(getComputedStyle(swatch).backgroundColor).to.equal('rgb(255, 0, 0)');
  });

  it('refreshStyles() picks up properties changed at run time', async () => {
    const el = await load('bar');
    el.style.setProperty('--analytics-chart-color-1', 'rgb(0, 0, 255)');
    el.refreshStyles();
    await el.updateComplete;
    expect(chartOf(el).data.datasets[0]?.backgroundColor).to.equal('rgb(0, 0, 255)');
  });

  it('animates updates, except under prefers-reduced-motion', async () => {
    const el = await load('single-line');
    // The first draw is never animated: the data should be there at once.
    expect(chartOf(el).options.animation).to.equal(false);
    let loaded = nextEvent(el, 'analytics-chart-load');
    el.queryId = 'multi-line';
    await loaded;
    expect(chartOf(el).options.animation).to.deep.include({ duration: 300 });
    await emulateMedia({ reducedMotion: 'reduce' });
    loaded = nextEvent(el, 'analytics-chart-load');
    el.queryId = 'cumulative-line';
    await loaded;
    expect(chartOf(el).options.animation).to.equal(false);
  });
});
