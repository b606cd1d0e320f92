import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { ActiveElement, Chart, ChartConfiguration, Plugin } from 'chart.js';
import { html, nothing, type ReactiveController, type ReactiveControllerHost } from 'lit';
import {
  type ActivePoint,
  describePoints,
  type PointDescription,
  pointDescriptionText,
} from '../accessibility/describe-points.ts';
import { pointIndexForKey } from '../accessibility/point-key.ts';
import { backgroundPlugin } from './background-plugin.ts';
import type { ChartFormatters } from './chart-formatters.ts';
import { legendItems } from './legend-items.ts';
import { registerChartParts } from './register-chart-parts.ts';
import { PALETTE_SIZE, resolveTheme } from './resolve-theme.ts';
import { stackFillPlugin } from './stack-fill-plugin.ts';
import { toChartConfig } from './to-chart-config.ts';

/** The tooltip: what to say and where (canvas pixels of the first active point). */
interface ChartTooltip {
  description: PointDescription;
  x: number;
  y: number;
}

/** What a drawing depends on besides the payload: a change to any of them draws again. */
export interface ChartDrawOptions {
  /** For the payload's zone and the viewer's locale; one object per pair, so it can be compared. */
  formatters: ChartFormatters;
  doughnut: boolean;
  /** The theme's colors are read from the page's styles again when either changes. */
  dark: boolean;
  themeRevision: number;
}

/**
 * Owns the Chart.js side of one chart: the chart created once per kind and updated in place, and
 * the HTML beside the canvas that replaces Chart.js's legend and tooltip plugins: the legend with
 * the series the viewer hid, the tooltip that mirrors the active points, and the arrow keys that
 * walk them. The chart is destroyed in `hostDisconnected`.
 */
export class ChartCanvasController implements ReactiveController {
  /** What the live region says after a keyboard move. */
  announcement = '';

  readonly #host: ReactiveControllerHost;
  #chart: Chart | undefined;
  #tooltip: ChartTooltip | undefined;
  /** What the chart shows: the payload and options it was drawn from, and the tooltip's formatters. */
  #drawn: { key: unknown[]; payload: ChartPayload; formatters: ChartFormatters } | undefined;
  /** Legend entries the viewer switched off, by label, so a refresh keeps them off. */
  readonly #hidden = new Set<string>();
  #activeKey = '';
  /** Reports Chart.js's active points (hover, touch) to the HTML tooltip. */
  readonly #activePlugin: Plugin = {
    id: 'analyticsChartActive',
    afterEvent: (chart) => this.#showActive(chart, false),
  };

  constructor(host: ReactiveControllerHost) {
    this.#host = host;
    host.addController(this);
  }

  hostDisconnected(): void {
    this.destroy();
  }

  /** The Chart.js instance while a canvas chart is shown. */
  get chart(): Chart | undefined {
    return this.#chart;
  }

  /** The legend as toggle buttons; nothing when it would say nothing (one series, a funnel). */
  renderLegend(payload: ChartPayload) {
    const items = legendItems(payload);
    if (!items.length) return nothing;
    return html`<ul part="legend" class="legend">
      ${items.map(
        (item) => html`<li>
          <button
            type="button"
            aria-pressed=${this.#hidden.has(item.label) ? 'false' : 'true'}
            @click=${() => this.#toggleSeries(item.label)}
          >
            <span class=${swatchClass(item)} aria-hidden="true"></span>${item.label}
          </button>
        </li>`,
      )}
    </ul>`;
  }

  /** The tooltip, hidden from screen readers: keyboard moves reach them through `announcement`. */
  renderTooltip() {
    const tip = this.#tooltip;
    if (!tip) return nothing;
    const { title, rows, notes } = tip.description;
    return html`<div part="tooltip" class="tooltip" aria-hidden="true">
      <div class="tooltip-title">${title}</div>
      ${rows.map(
        (r) => html`<div class="tooltip-row">
          <span class=${swatchClass(r)}></span>
          <span>${r.name}</span><span class="tooltip-value">${r.value}</span>
        </div>`,
      )}
      ${notes.map((n) => html`<div class="tooltip-note">${n}</div>`)}
    </div>`;
  }

  /**
   * Draws `payload` on `canvas`, reading the theme from `themeSource`'s computed style. Does
   * nothing when neither the payload nor an option changed; a chart of the same kind is updated in
   * place, so Chart.js animates from the old values.
   */
  draw(
    canvas: HTMLCanvasElement,
    themeSource: Element,
    payload: ChartPayload,
    options: ChartDrawOptions,
  ): void {
    const { formatters, doughnut, dark, themeRevision } = options;
    const drawn = {
      key: [payload, formatters, dark, doughnut, themeRevision],
      payload,
      formatters,
    };
    if (this.#chart && this.#drawn?.key.every((v, i) => v === drawn.key[i])) return;

    const ChartClass = registerChartParts();
    const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)').matches;
    const config = toChartConfig(payload, {
      theme: resolveTheme(themeSource),
      formatters,
      doughnut,
      animate: !!this.#chart && !reducedMotion,
    }) as ChartConfiguration | null;
    if (!config) return;
    this.clearActive();
    this.#drawn = drawn;
    const chart = this.#chart;
    if (chart && (chart.config as { type?: string }).type === config.type) {
      chart.data = config.data;
      chart.options = config.options ?? {};
      this.#applyVisibility(chart);
      chart.update();
      return;
    }
    this.destroy();
    this.#drawn = drawn;
    const created = new ChartClass(canvas, {
      ...config,
      plugins: [backgroundPlugin, stackFillPlugin, this.#activePlugin],
    });
    this.#chart = created;
    if (this.#hidden.size) {
      this.#applyVisibility(created);
      created.update('none');
    }
  }

  /** Destroys the chart (when one is shown) and forgets what was active. */
  destroy(): void {
    this.#chart?.destroy();
    this.#chart = undefined;
    this.#drawn = undefined;
    this.#activeKey = '';
    this.#setTooltip(undefined);
  }

  /** Switches a series (or Pie slice) off or back on. */
  #toggleSeries(label: string): void {
    if (!this.#hidden.delete(label)) this.#hidden.add(label);
    const chart = this.#chart;
    if (chart) {
      this.#applyVisibility(chart);
      chart.update();
    }
    this.clearActive();
    this.#host.requestUpdate();
  }

  /** Hides the tooltip and deactivates the points (blur, Escape, a redraw). */
  clearActive = (): void => {
    this.#activeKey = '';
    this.#setTooltip(undefined);
    const chart = this.#chart;
    if (chart?.getActiveElements().length) {
      chart.setActiveElements([]);
      chart.update('none');
    }
  };

  /** The canvas's keydown listener: keys walk the points with the tooltip, so keyboard users read values too. */
  onKeydown = (event: KeyboardEvent): void => {
    const chart = this.#chart;
    if (!chart) return;
    const count = Math.max(0, ...chart.data.datasets.map((d) => (d.data as unknown[]).length));
    if (!count) return;
    const current = chart.getActiveElements()[0]?.index ?? -1;
    const index = pointIndexForKey(event.key, current, count);
    if (index === undefined) return;
    if (index === 'clear') {
      this.clearActive();
      return;
    }
    event.preventDefault();
    const active: ActiveElement[] = [];
    chart.data.datasets.forEach((_, datasetIndex) => {
      const element = chart.getDatasetMeta(datasetIndex).data[index];
      if (element && chart.isDatasetVisible(datasetIndex))
        active.push({ datasetIndex, index, element });
    });
    chart.setActiveElements(active);
    chart.update('none');
    this.#showActive(chart, true);
  };

  /** Places the tooltip beside the active point, on the side with more room, inside the chart vertically. */
  placeTooltip(tooltip: HTMLElement): void {
    const tip = this.#tooltip;
    if (!tip) return;
    const width = this.#chart?.width ?? 0;
    const height = this.#chart?.height ?? 0;
    const x = tip.x > width / 2 ? `calc(${tip.x - 12}px - 100%)` : `${tip.x + 12}px`;
    const y = `clamp(0px, calc(${tip.y}px - 50%), calc(${height}px - 100%))`;
    tooltip.style.transform = `translate(${x}, ${y})`;
  }

  /** Hides the series or slices the viewer switched off in the legend. */
  #applyVisibility(chart: Chart): void {
    const type = (chart.config as { type?: string }).type;
    if (type === 'pie' || type === 'doughnut') {
      (chart.data.labels ?? []).forEach((label, i) => {
        if (chart.getDataVisibility(i) === this.#hidden.has(String(label))) {
          chart.toggleDataVisibility(i);
        }
      });
      return;
    }
    chart.data.datasets.forEach((dataset, i) => {
      chart.setDatasetVisibility(i, !this.#hidden.has(dataset.label ?? ''));
    });
  }

  /** Mirrors Chart.js's active points into the HTML tooltip; keyboard moves also go to the live region. */
  #showActive(chart: Chart, announce: boolean): void {
    const active = chart.getActiveElements();
    const key = active.map((a) => `${a.datasetIndex}:${a.index}`).join();
    if (key === this.#activeKey && !announce) return;
    this.#activeKey = key;
    const drawn = this.#drawn;
    const first = active[0];
    if (!drawn || !first) {
      this.#setTooltip(undefined);
      return;
    }
    const points: ActivePoint[] = active.map((a) => ({
      datasetIndex: a.datasetIndex,
      index: a.index,
    }));
    const description = describePoints(
      drawn.payload,
      points,
      chart.data.datasets as { data: unknown[] }[],
      drawn.formatters,
    );
    if (!description) return;
    if (announce) this.announcement = pointDescriptionText(description);
    const y = Math.min(...active.map((a) => a.element.y));
    this.#setTooltip({ description, x: first.element.x, y });
  }

  /** Like a reactive property: the host renders again only when the tooltip changed. */
  #setTooltip(tooltip: ChartTooltip | undefined): void {
    if (tooltip === this.#tooltip) return;
    this.#tooltip = tooltip;
    this.#host.requestUpdate();
  }
}

/** A legend or tooltip swatch: the series' palette color, dashed for comparisons. */
function swatchClass(item: { color: number; dashed: boolean }): string {
  return `swatch c${(item.color % PALETTE_SIZE) + 1}${item.dashed ? ' dashed' : ''}`;
}
