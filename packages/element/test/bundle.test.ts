/**
 * The CDN bundle as a host page uses it: `dist/analytics-chart.js` (built by the test runner
 * before this run) loaded with one `<script type="module">` in a plain page under a strict
 * Content-Security-Policy, with no endpoint attribute: it must register the element, find the
 * edge next to itself, draw, and trip no CSP rule.
 */
import { expect } from 'chai';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import { until } from './helpers.ts';

describe('CDN bundle', () => {
  it('is one self-contained ES module', async () => {
    const text = await (await fetch('/cdn/analytics-chart.js')).text();
    // No import statements or dynamic imports: nothing else to fetch.
    expect(text).not.to.match(
      /\bimport\s*[({*]|\bimport\s+[\w$]+\s+from\s*["'`]|\bfrom\s*["'`][./]/,
    );
    expect(text).not.to.match(/\beval\(|new Function\(/);
    expect(text).to.contain('customElements.define');
  });

  it('carries only the Chart.js parts the element registers', async () => {
    const text = await (await fetch('/cdn/analytics-chart.js')).text();
    const id = (name: string) => new RegExp(`id\\s*[:=]\\s*[\`"']${name}[\`"']`);
    for (const used of ['line', 'bar', 'pie', 'doughnut', 'category', 'linear', 'decimation']) {
      expect(text, used).to.match(id(used));
    }
    // Other controllers and scales, and the plugins replaced by HTML or our own code.
    for (const unused of [
      'radar',
      'polarArea',
      'bubble',
      'scatter',
      'time',
      'timeseries',
      'logarithmic',
      'radialLinear',
      'legend',
      'tooltip',
      'title',
      'subtitle',
      'filler',
      'colors',
    ]) {
      expect(text, unused).not.to.match(id(unused));
    }
  });

  it('draws in a plain page under a strict CSP, with the endpoint next to the script', async () => {
    const frame = document.createElement('iframe');
    frame.style.width = '700px';
    frame.style.height = '800px';
    frame.src = new URL('./pages/csp.html', import.meta.url).href;
    document.body.append(frame);
    try {
      await new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
      const win = frame.contentWindow as (Window & { cspViolations: string[] }) | null;
      const doc = frame.contentDocument;
      if (!win || !doc) throw new Error('no frame document');
      const charts = await until(
        () => {
          const all = [...doc.querySelectorAll('analytics-chart')] as AnalyticsChart[];
          return all.length === 2 && all[0]?.chart && all[1]?.mode === 'value' ? all : undefined;
        },
        'both charts drawn',
        8000,
      ).catch((error: Error) => {
        const states = [...doc.querySelectorAll('analytics-chart')].map(
          (c) => `${(c as AnalyticsChart).status}/${(c as AnalyticsChart).mode}`,
        );
        throw new Error(`${error.message}: ${states.join()}; CSP: ${win.cspViolations.join('; ')}`);
      });
      const [stacked, value] = charts;
      expect(win.customElements.get('analytics-chart')).to.exist;
      expect(stacked?.chart?.data.datasets).to.have.length(2);
      expect(value?.shadowRoot?.querySelector('[part="value"]')?.textContent?.trim()).to.equal(
        '1,250',
      );
      // Styles arrive through adopted stylesheets, so the strict style-src still styles them.
      const base = value?.shadowRoot?.querySelector('[part="base"]');
      expect(base && win.getComputedStyle(base).backgroundColor).to.equal('rgb(13, 17, 23)');
      expect(win.cspViolations).to.deep.equal([]);
    } finally {
      frame.remove();
    }
  });
});
