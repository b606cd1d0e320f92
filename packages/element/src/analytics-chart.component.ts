import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { ActiveElement, Chart, ChartConfiguration, Plugin } from 'chart.js';
import { html, LitElement, nothing, type PropertyDeclarations, type TemplateResult } from 'lit';
import {
  type ActivePoint,
  describePoints,
  type PointDescription,
  pointDescriptionText,
} from './accessibility/describe-points.ts';
import { summarizeChart } from './accessibility/summarize-chart.ts';
import { type DataTable, formatCell, toDataTable } from './accessibility/to-data-table.ts';
import { analyticsChartStyles } from './analytics-chart.styles.ts';
import { backgroundPlugin } from './chart/background-plugin.ts';
import { type ChartFormatters, createFormatters, resolveLocale } from './chart/chart-formatters.ts';
import { compareDelta } from './chart/compare-delta.ts';
import { legendItems } from './chart/legend-items.ts';
import { registerChartParts } from './chart/register-chart-parts.ts';
import { resolveTheme } from './chart/resolve-theme.ts';
import { stackFillPlugin } from './chart/stack-fill-plugin.ts';
import { toChartConfig } from './chart/to-chart-config.ts';
import { warmUpChartJs } from './chart/warm-up-chart.ts';
import { ChartDataController, type ChartDataStatus } from './data/chart-data-controller.ts';
import { ERROR_TEXT } from './data/chart-load-error.ts';
import { isEmptyPayload, viewOf } from './data/payload-shape.ts';
import { edgeUrl } from './data/request-chart-data.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './data/retry-delay.ts';
import { chartEvent } from './events.ts';
import { toCsv } from './export/to-csv.ts';

/**
 * The directory the script was served from: the edge that served it also answers `api/data`.
 * (Through a variable: Vite rewrites `new URL('…', import.meta.url)` into an asset reference.)
 */
const SCRIPT_URL = import.meta.url;
const SCRIPT_DIRECTORY = new URL('.', SCRIPT_URL).href;

/** Rows the table view renders at most; the CSV export always has all of them. */
const TABLE_ROW_LIMIT = 1000;

/** Shortest refresh interval in seconds: a page left open must not hammer the edge. */
const MIN_REFRESH = 1;

const DEFAULT_HEIGHT = '300px';

/** `light`, `dark`, or `auto` to follow the viewer's `prefers-color-scheme` live. */
export type ChartThemeName = 'light' | 'dark' | 'auto';

/** Number of palette slots, matching `--analytics-chart-color-1…8`. */
const PALETTE_SLOTS = 8;

/** The tooltip: what to say and where (canvas pixels of the first active point). */
interface TooltipState {
  description: PointDescription;
  x: number;
  y: number;
}

/** What the element shows right now. */
export type ChartMode = 'loading' | 'error' | 'empty' | 'canvas' | 'value' | 'table';

const lazyConverter = {
  fromAttribute: (value: string | null) => value !== 'false',
  toAttribute: (value: boolean) => (value ? null : 'false'),
};

/**
 * Draws one analytics query, identified by a signed query id, fetched from the edge.
 *
 * @summary A chart of a signed analytics query: drop it into any page with its query id.
 *
 * @fires {CustomEvent<ChartLoadDetail>} analytics-chart-load - A payload arrived and was drawn; `detail.payload` is the chart payload.
 * @fires {CustomEvent<ChartErrorDetail>} analytics-chart-error - Loading failed for good; `detail` is `{ status, message, code }`.
 * @fires {CustomEvent<ChartTokenExpiredDetail>} analytics-chart-token-expired - The query id expired; call `detail.renew(idOrPromise)` synchronously to answer with a fresh one, otherwise the element asks `token-url`.
 *
 * @slot loading - Shown while the first data loads (default: a skeleton of the chart's size).
 * @slot empty - Shown when the query returned nothing (default: "No data for this period").
 * @slot error - Shown when loading failed (default: a sentence for the failure and, when useful, a Retry button).
 *
 * @csspart base - The outer box: background, padding, radius.
 * @csspart header - The row with the title and the buttons.
 * @csspart title - The chart title from the payload.
 * @csspart toolbar - The buttons: data table toggle and exports.
 * @csspart button - Each toolbar or retry button.
 * @csspart body - The fixed-height area that holds the chart or a state.
 * @csspart canvas - The chart canvas (`role="img"` with a summary).
 * @csspart legend - The legend list (several series, or Pie slices); each entry is a toggle button.
 * @csspart tooltip - The tooltip over the chart.
 * @csspart value - Single Value's big number.
 * @csspart delta - Single Value's change against the comparison window.
 * @csspart table - The data table (Table, Samples, or the table view of a chart).
 * @csspart state - The container of the loading, empty and error states.
 * @csspart skeleton - The default loading placeholder.
 * @csspart message - The default empty and error sentences.
 *
 * @cssproperty [--analytics-chart-color-1=#2563eb] - First series color; series cycle through the eight palette colors.
 * @cssproperty [--analytics-chart-color-2=#ea580c] - Second series color.
 * @cssproperty [--analytics-chart-color-3=#16a34a] - Third series color.
 * @cssproperty [--analytics-chart-color-4=#9333ea] - Fourth series color.
 * @cssproperty [--analytics-chart-color-5=#0891b2] - Fifth series color.
 * @cssproperty [--analytics-chart-color-6=#db2777] - Sixth series color.
 * @cssproperty [--analytics-chart-color-7=#a16207] - Seventh series color.
 * @cssproperty [--analytics-chart-color-8=#4b5563] - Eighth series color.
 * @cssproperty [--analytics-chart-background=#ffffff] - Background of the chart and exported PNG.
 * @cssproperty [--analytics-chart-text=#1f2328] - Text, legend and title color.
 * @cssproperty [--analytics-chart-muted=#59636e] - Axis ticks and secondary text.
 * @cssproperty [--analytics-chart-grid=rgba(31, 35, 40, 0.12)] - Grid lines, table rules and button borders.
 * @cssproperty [--analytics-chart-font=system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif] - Font family of the whole chart, canvas included.
 * @cssproperty [--analytics-chart-font-size=12px] - Base font size.
 * @cssproperty [--analytics-chart-positive=#1a7f37] - Color of an upward Single Value delta.
 * @cssproperty [--analytics-chart-negative=#cf222e] - Color of a downward Single Value delta.
 * @cssproperty [--analytics-chart-skeleton=#eaeef2] - Color of the loading skeleton.
 * @cssproperty [--analytics-chart-focus=#0969da] - Focus ring color.
 * @cssproperty [--analytics-chart-padding=12px] - Padding inside the box.
 * @cssproperty [--analytics-chart-radius=8px] - Corner radius of the box.
 * @cssproperty [--analytics-chart-value-size=3.5em] - Font size of Single Value's number.
 */
export class AnalyticsChart extends LitElement {
  static override styles = analyticsChartStyles;

  static override properties: PropertyDeclarations = {
    queryId: { type: String, attribute: 'query-id' },
    endpoint: { type: String },
    theme: { type: String, reflect: true },
    height: { type: String },
    refresh: { type: Number },
    lazy: { converter: lazyConverter },
    locale: { type: String },
    range: { type: String },
    tokenUrl: { type: String, attribute: 'token-url' },
    credentials: { type: String },
    export: { type: Boolean },
    doughnut: { type: Boolean },
    retryPolicy: { attribute: false },
    _tableView: { state: true, attribute: false },
    _themeRevision: { state: true, attribute: false },
    _tooltip: { state: true, attribute: false },
    _announcement: { state: true, attribute: false },
  };

  /** The signed query id; sent as `Authorization: Bearer`, never in the URL. Changing it re-fetches. */
  declare queryId: string | undefined;
  /** Base URL of the edge; `api/data` and `api/renew` are resolved below it. Default: the directory the script was served from. */
  declare endpoint: string | undefined;
  /** `light` (default), `dark`, or `auto` to follow `prefers-color-scheme` live. */
  declare theme: ChartThemeName | undefined;
  /** Height of the whole element: a number of pixels or a CSS length (default 300px). */
  declare height: string | undefined;
  /** Re-fetch every this many seconds (at least 1) while the chart is visible; 0 or unset for never. */
  declare refresh: number | undefined;
  /** Fetch only once the chart is near the viewport (default true; `lazy="false"` to fetch at once). */
  declare lazy: boolean;
  /** BCP 47 locale for numbers and dates; default the nearest `lang` attribute, then the browser's. */
  declare locale: string | undefined;
  /** A viewer-chosen time range the query definition allows, sent as `?range=`. */
  declare range: string | undefined;
  /** Where to renew an expired id (`POST {"id"}` → `{id, expiresAt}`); default `api/renew` below the endpoint. */
  declare tokenUrl: string | undefined;
  /** Fetch credentials: `same-origin` (default), `include` for a cross-origin edge that checks the host's session cookie, or `omit`. */
  declare credentials: RequestCredentials | undefined;
  /** Show CSV and PNG download buttons. */
  declare export: boolean;
  /** Draw Pie Chart as a doughnut. */
  declare doughnut: boolean;
  /** Retries of transient failures (property only): attempts and backoff in milliseconds. */
  declare retryPolicy: RetryPolicy;
  /** @internal */
  declare _tableView: boolean;
  /** @internal */
  declare _themeRevision: number;
  /** @internal */
  declare _tooltip: TooltipState | undefined;
  /** @internal */
  declare _announcement: string;

  readonly #data = new ChartDataController(
    this,
    () => this.#dataConfig(),
    (id) => {
      this.queryId = id;
    },
    () => {
      if (!this.#chart) warmUpChartJs();
    },
  );
  #chart: Chart | undefined;
  #drawnKey: unknown[] | undefined;
  #darkScheme: MediaQueryList | undefined;
  /** Legend entries the viewer switched off, by label, so a refresh keeps them off. */
  readonly #hidden = new Set<string>();
  #activeKey = '';
  /** Reports Chart.js's active points (hover, touch) to the HTML tooltip. */
  readonly #activePlugin: Plugin = {
    id: 'analyticsChartActive',
    afterEvent: (chart) => this.#showActive(chart, false),
  };

  constructor() {
    super();
    this.lazy = true;
    this.export = false;
    this.doughnut = false;
    this.retryPolicy = DEFAULT_RETRY_POLICY;
    this._tableView = false;
    this._themeRevision = 0;
    this._tooltip = undefined;
    this._announcement = '';
  }

  /** The Chart.js instance while a canvas chart is shown (read-only use: tests, advanced hosts). */
  get chart(): Chart | undefined {
    return this.#chart;
  }

  /** The payload shown (or kept while refreshing). */
  get payload(): ChartPayload | undefined {
    return this.#data.payload;
  }

  /** Loading status: `idle` (no query id), `loading`, `ready` or `error`. */
  get status(): ChartDataStatus {
    return this.#data.status;
  }

  /** What is on screen: a state, or the chart's view. */
  get mode(): ChartMode {
    const { status, error, payload } = this.#data;
    if (status === 'error' && error) return 'error';
    if (!payload) return 'loading';
    if (isEmptyPayload(payload)) return 'empty';
    return viewOf(payload.graph);
  }

  /** Fetches again now (as the Retry button does). */
  reload(): void {
    this.#data.reload();
  }

  /** The data as CSV text (RFC 4180), or undefined before data arrives. */
  toCsv(): string | undefined {
    const payload = this.#data.payload;
    return payload ? toCsv(toDataTable(payload)) : undefined;
  }

  /** Downloads the data as a CSV file. */
  downloadCsv(): void {
    const csv = this.toCsv();
    if (csv === undefined) return;
    // A data: URL needs no object URL to revoke later (no timer outliving the element).
    this.#download(
      `${this.#fileName()}.csv`,
      `data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`,
    );
  }

  /** Downloads the chart as a PNG image (canvas graph types only). */
  downloadPng(): void {
    if (!this.#chart) return;
    this.#download(`${this.#fileName()}.png`, this.#chart.toBase64Image('image/png'));
  }

  /**
   * Re-reads the `--analytics-chart-*` properties and redraws. Theme and attribute changes do this
   * by themselves; call it after changing the page's CSS at run time.
   */
  refreshStyles(): void {
    this._themeRevision++;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#darkScheme = matchMedia('(prefers-color-scheme: dark)');
    this.#darkScheme.addEventListener('change', this.#onSchemeChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#darkScheme?.removeEventListener('change', this.#onSchemeChange);
    this.#darkScheme = undefined;
    this.#destroyChart();
  }

  #onSchemeChange = (): void => {
    if (this.theme === 'auto') this._themeRevision++;
  };

  #isDark(): boolean {
    if (this.theme === 'dark') return true;
    return this.theme === 'auto' && !!this.#darkScheme?.matches;
  }

  #dataConfig() {
    const endpoint = this.endpoint || SCRIPT_DIRECTORY;
    const refresh = Number(this.refresh) > 0 ? Math.max(MIN_REFRESH, Number(this.refresh)) : 0;
    const credentials: RequestCredentials =
      this.credentials === 'include' || this.credentials === 'omit'
        ? this.credentials
        : 'same-origin';
    return {
      queryId: this.queryId || undefined,
      endpoint,
      range: this.range || undefined,
      credentials,
      tokenUrl: this.tokenUrl
        ? new URL(this.tokenUrl, document.baseURI)
        : edgeUrl(endpoint, 'api/renew'),
      refresh,
      lazy: this.lazy !== false,
      retryPolicy: this.retryPolicy ?? DEFAULT_RETRY_POLICY,
    };
  }

  #formatters(payload: ChartPayload): ChartFormatters {
    return createFormatters(resolveLocale(this.locale, this), payload.timeZone);
  }

  #heightStyle(): string {
    const h = this.height?.trim();
    if (!h) return DEFAULT_HEIGHT;
    if (/^\d+(\.\d+)?$/.test(h)) return `${h}px`;
    return CSS.supports('height', h) ? h : DEFAULT_HEIGHT;
  }

  override render(): TemplateResult {
    const mode = this.mode;
    const payload = this.#data.payload;
    const f = payload ? this.#formatters(payload) : undefined;
    const canvasShown = mode === 'canvas' && !this._tableView;
    const busy = mode === 'loading' || this.#data.busy;
    return html`
      <div
        part="base"
        class="base"
        data-theme=${this.#isDark() ? 'dark' : 'light'}
        aria-busy=${busy ? 'true' : 'false'}
      >
        ${this.#renderHeader(mode, payload)}
        ${canvasShown && payload ? this.#renderLegend(payload) : nothing}
        <div part="body" class="body">
          <div class="chart" ?hidden=${!canvasShown}>
            <canvas
              part="canvas"
              role="img"
              tabindex=${canvasShown ? '0' : '-1'}
              aria-label=${payload && f ? summarizeChart(payload, f) : 'Chart'}
              @keydown=${this.#onCanvasKey}
              @blur=${this.#clearActive}
            ></canvas>
            ${canvasShown ? this.#renderTooltip() : nothing}
            <div class="visually-hidden" aria-live="polite">${this._announcement}</div>
          </div>
          ${mode === 'value' && payload && f ? this.#renderValue(payload, f) : nothing}
          ${
            (mode === 'table' || (mode === 'canvas' && this._tableView)) && payload && f
              ? this.#renderTable(payload, f)
              : nothing
          }
          ${this.#renderState(mode)}
        </div>
      </div>
    `;
  }

  #renderHeader(mode: ChartMode, payload: ChartPayload | undefined) {
    const hasData = mode === 'canvas' || mode === 'value' || mode === 'table';
    const title = payload?.title;
    if (!title && !hasData) return nothing;
    return html`
      <div part="header" class="header">
        ${title ? html`<h2 part="title" class="title">${title}</h2>` : nothing}
        ${
          hasData
            ? html`<div part="toolbar" class="toolbar">
              ${
                mode === 'canvas'
                  ? html`<button
                    part="button"
                    type="button"
                    aria-pressed=${this._tableView ? 'true' : 'false'}
                    @click=${this.#toggleTable}
                  >
                    Data table
                  </button>`
                  : nothing
              }
              ${
                this.export
                  ? html`<button part="button" type="button" @click=${this.downloadCsv}>
                    CSV
                  </button>`
                  : nothing
              }
              ${
                this.export && mode === 'canvas'
                  ? html`<button part="button" type="button" @click=${this.downloadPng}>
                    PNG
                  </button>`
                  : nothing
              }
            </div>`
            : nothing
        }
      </div>
    `;
  }

  #renderLegend(payload: ChartPayload) {
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
            <span
              class="swatch c${(item.color % PALETTE_SLOTS) + 1} ${item.dashed ? 'dashed' : ''}"
              aria-hidden="true"
            ></span
            >${item.label}
          </button>
        </li>`,
      )}
    </ul>`;
  }

  #renderTooltip() {
    const tip = this._tooltip;
    if (!tip) return nothing;
    const { title, rows, notes } = tip.description;
    return html`<div part="tooltip" class="tooltip" aria-hidden="true">
      <div class="tooltip-title">${title}</div>
      ${rows.map(
        (r) => html`<div class="tooltip-row">
          <span class="swatch c${(r.color % PALETTE_SLOTS) + 1} ${r.dashed ? 'dashed' : ''}"></span>
          <span>${r.name}</span><span class="tooltip-value">${r.value}</span>
        </div>`,
      )}
      ${notes.map((n) => html`<div class="tooltip-note">${n}</div>`)}
    </div>`;
  }

  #renderState(mode: ChartMode) {
    if (mode === 'loading') {
      return html`<div part="state" class="state">
        <slot name="loading">
          <div part="skeleton" class="skeleton" role="status">
            <span class="visually-hidden">Loading chart</span>
          </div>
        </slot>
      </div>`;
    }
    if (mode === 'empty') {
      return html`<div part="state" class="state">
        <slot name="empty"><p part="message" class="message">No data for this period</p></slot>
      </div>`;
    }
    if (mode === 'error') {
      const error = this.#data.error;
      const code = error?.code ?? 'unknown';
      let text = ERROR_TEXT[code];
      if (code === 'rate_limited' && error?.retryAfter !== undefined) {
        text = `Too many requests. Retrying in ${error.retryAfter} s.`;
      }
      const canRetry =
        code === 'network' || code === 'backend' || code === 'timeout' || code === 'unknown';
      return html`<div part="state" class="state" data-code=${code}>
        <slot name="error">
          <p part="message" class="message" role="alert">${text}</p>
          ${
            canRetry
              ? html`<button part="button" type="button" @click=${this.reload}>Retry</button>`
              : nothing
          }
        </slot>
      </div>`;
    }
    return nothing;
  }

  #renderValue(payload: ChartPayload, f: ChartFormatters) {
    const delta = compareDelta(payload.value, payload.compareValue);
    let deltaView: TemplateResult | typeof nothing = nothing;
    if (delta) {
      const amount =
        delta.relative === null
          ? f.number(Math.abs(delta.absolute))
          : f.percent(Math.abs(delta.relative));
      const sign = delta.direction === 'up' ? '▲' : delta.direction === 'down' ? '▼' : '●';
      const word =
        delta.direction === 'up' ? 'Up' : delta.direction === 'down' ? 'Down' : 'Unchanged';
      deltaView = html`<div part="delta" class="delta ${delta.direction}">
        <span aria-hidden="true">${sign}</span>
        <span class="visually-hidden">${word}</span>
        ${delta.direction === 'flat' ? nothing : amount}
        <span class="versus">vs ${f.number(payload.compareValue)} in the previous period</span>
      </div>`;
    }
    return html`<div class="value-view">
      <div part="value" class="value">${f.number(payload.value)}</div>
      ${deltaView}
    </div>`;
  }

  #renderTable(payload: ChartPayload, f: ChartFormatters) {
    const table: DataTable = toDataTable(payload);
    const rows = table.rows.slice(0, TABLE_ROW_LIMIT);
    const caption = payload.title || `${payload.graph} data`;
    const cut = table.rows.length - rows.length;
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${caption}>
      <table part="table">
        <caption class="visually-hidden">${caption}</caption>
        <thead>
          <tr>
            ${table.columns.map((c) => html`<th scope="col">${c.name}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (row) => html`<tr>
              ${table.columns.map((c, i) => {
                const value = row[i];
                const kind =
                  typeof value === 'number' && c.kind !== 'label' && c.kind !== 'timestamp'
                    ? 'number'
                    : typeof value === 'object' && value !== null
                      ? 'json'
                      : '';
                return html`<td class=${kind}>${formatCell(value, c.kind, f)}</td>`;
              })}
            </tr>`,
          )}
        </tbody>
      </table>
      ${
        cut > 0
          ? html`<p class="note">Showing the first ${rows.length} of ${table.rows.length} rows; the CSV export has all.</p>`
          : payload.truncated
            ? html`<p class="note">The result was cut at ${table.rows.length} rows.</p>`
            : nothing
      }
    </div>`;
  }

  override updated(): void {
    // An update can run after disconnection; drawing then would leave a chart nobody destroys.
    if (!this.isConnected) return;
    this.#applyInlineStyles();
    const payload = this.#data.payload;
    const mode = this.mode;
    if (payload && mode === 'canvas') {
      this.#draw(payload);
    } else if (payload && mode !== 'error' && mode !== 'loading') {
      // Single Value, Table, Samples and empty payloads need no canvas.
      this.#destroyChart();
    }
    const loaded = this.#data.takeLoaded();
    if (loaded) this.dispatchEvent(chartEvent('analytics-chart-load', { payload: loaded }));
  }

  /**
   * Sizes set through the CSSOM, never as `style` attributes: a page whose CSP has no
   * `'unsafe-inline'` for styles blocks attributes but allows `element.style`.
   */
  #applyInlineStyles(): void {
    const base = this.renderRoot.querySelector<HTMLElement>('.base');
    if (base) base.style.height = this.#heightStyle();
    const tip = this._tooltip;
    const tooltip = this.renderRoot.querySelector<HTMLElement>('.tooltip');
    if (!tip || !tooltip) return;
    const width = this.#chart?.width ?? 0;
    const height = this.#chart?.height ?? 0;
    // Beside the point, on the side with more room, kept inside the chart vertically.
    const x = tip.x > width / 2 ? `calc(${tip.x - 12}px - 100%)` : `${tip.x + 12}px`;
    const y = `clamp(0px, calc(${tip.y}px - 50%), calc(${height}px - 100%))`;
    tooltip.style.transform = `translate(${x}, ${y})`;
  }

  #draw(payload: ChartPayload): void {
    const canvas = this.renderRoot.querySelector('canvas');
    const base = this.renderRoot.querySelector('.base');
    if (!canvas || !base) return;
    const locale = resolveLocale(this.locale, this);
    const dark = this.#isDark();
    const key = [payload, locale, dark, this.doughnut, this._themeRevision];
    if (this.#chart && this.#drawnKey?.every((v, i) => v === key[i])) return;
    this.#drawnKey = key;

    const ChartClass = registerChartParts();
    const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)').matches;
    const config = toChartConfig(payload, {
      theme: resolveTheme(base),
      formatters: createFormatters(locale, payload.timeZone),
      doughnut: this.doughnut,
      animate: !!this.#chart && !reducedMotion,
    }) as ChartConfiguration | null;
    if (!config) return;
    this.#clearActive();
    const chart = this.#chart;
    if (chart && (chart.config as { type?: string }).type === config.type) {
      // Same kind of chart: update in place, so Chart.js animates from the old values.
      chart.data = config.data;
      chart.options = config.options ?? {};
      this.#applyVisibility(chart);
      chart.update();
      return;
    }
    this.#destroyChart();
    this.#drawnKey = key;
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

  #toggleSeries(label: string): void {
    if (!this.#hidden.delete(label)) this.#hidden.add(label);
    const chart = this.#chart;
    if (chart) {
      this.#applyVisibility(chart);
      chart.update();
    }
    this.#clearActive();
    this.requestUpdate();
  }

  /** Mirrors Chart.js's active points into the HTML tooltip; keyboard moves also go to the live region. */
  #showActive(chart: Chart, announce: boolean): void {
    const active = chart.getActiveElements();
    const key = active.map((a) => `${a.datasetIndex}:${a.index}`).join();
    if (key === this.#activeKey && !announce) return;
    this.#activeKey = key;
    const payload = this.#data.payload;
    const first = active[0];
    if (!payload || !first) {
      this._tooltip = undefined;
      return;
    }
    const points: ActivePoint[] = active.map((a) => ({
      datasetIndex: a.datasetIndex,
      index: a.index,
    }));
    const description = describePoints(
      payload,
      points,
      chart.data.datasets as { data: unknown[] }[],
      this.#formatters(payload),
    );
    if (!description) return;
    const y = Math.min(...active.map((a) => a.element.y));
    this._tooltip = { description, x: first.element.x, y };
    if (announce) this._announcement = pointDescriptionText(description);
  }

  #clearActive = (): void => {
    this.#activeKey = '';
    this._tooltip = undefined;
    const chart = this.#chart;
    if (chart?.getActiveElements().length) {
      chart.setActiveElements([]);
      chart.update('none');
    }
  };

  #destroyChart(): void {
    this.#chart?.destroy();
    this.#chart = undefined;
    this.#drawnKey = undefined;
    this.#activeKey = '';
    this._tooltip = undefined;
  }

  #toggleTable(): void {
    this._tableView = !this._tableView;
  }

  /** Arrow keys walk the data points with the tooltip, so keyboard users can read values too. */
  #onCanvasKey(event: KeyboardEvent): void {
    const chart = this.#chart;
    if (!chart) return;
    const count = Math.max(0, ...chart.data.datasets.map((d) => (d.data as unknown[]).length));
    if (!count) return;
    const current = chart.getActiveElements()[0]?.index ?? -1;
    let index: number;
    switch (event.key) {
      case 'ArrowRight':
      case 'ArrowDown':
        index = Math.min(count - 1, current + 1);
        break;
      case 'ArrowLeft':
      case 'ArrowUp':
        index = Math.max(0, current - 1);
        break;
      case 'Home':
        index = 0;
        break;
      case 'End':
        index = count - 1;
        break;
      case 'Escape':
        this.#clearActive();
        return;
      default:
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
  }

  #fileName(): string {
    const title = this.#data.payload?.title ?? '';
    const slug = title
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60);
    return slug || 'chart';
  }

  #download(fileName: string, href: string): void {
    const link = document.createElement('a');
    link.download = fileName;
    link.href = href;
    link.hidden = true;
    this.renderRoot.appendChild(link);
    link.click();
    link.remove();
  }
}
