import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { Chart } from 'chart.js';
import { html, LitElement, nothing, type PropertyDeclarations, type TemplateResult } from 'lit';
import { renderDataTable } from './accessibility/render-data-table.ts';
import { summarizeChart } from './accessibility/summarize-chart.ts';
import { toDataTable } from './accessibility/to-data-table.ts';
import { analyticsChartStyles } from './analytics-chart.styles.ts';
import { ChartCanvasController } from './chart/chart-canvas-controller.ts';
import { type ChartFormatters, createFormatters, resolveLocale } from './chart/chart-formatters.ts';
import { renderSingleValue } from './chart/render-single-value.ts';
import { warmUpChartJs } from './chart/warm-up-chart.ts';
import { ChartDataController, type ChartDataStatus } from './data/chart-data-controller.ts';
import { ERROR_TEXT } from './data/chart-load-error.ts';
import { isEmptyPayload, viewOf } from './data/payload-shape.ts';
import { edgeUrl } from './data/request-chart-data.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './data/retry-delay.ts';
import { chartEvent } from './events.ts';
import { downloadFile, exportFileName } from './export/download-file.ts';
import { toCsv } from './export/to-csv.ts';

/**
 * The directory the script was served from: the edge that served it also answers `api/data`.
 * (Through a variable: Vite rewrites `new URL('…', import.meta.url)` into an asset reference.)
 */
const SCRIPT_URL = import.meta.url;
const SCRIPT_DIRECTORY = new URL('.', SCRIPT_URL).href;

/** Shortest refresh interval in seconds: a page left open must not hammer the edge. */
const MIN_REFRESH = 1;

const DEFAULT_HEIGHT = '300px';

/** `light`, `dark`, or `auto` to follow the viewer's `prefers-color-scheme` live. */
export type ChartThemeName = 'light' | 'dark' | 'auto';

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
  };

  /** The signed query id; sent as `Authorization: Bearer`, never in the URL. Changing it re-fetches. */
  declare queryId: string | undefined;
  /** Base URL of the edge; `api/data` and `api/renew` are resolved below it. Default: the directory the script was served from. */
  declare endpoint: string | undefined;
  /** `light` (default), `dark`, or `auto` to follow `prefers-color-scheme` live. */
  declare theme: ChartThemeName | undefined;
  /** Height of the whole element: a number of pixels or a CSS length (default 300px). */
  declare height: string | number | undefined;
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

  readonly #data = new ChartDataController(
    this,
    () => this.#dataConfig(),
    (id) => {
      this.queryId = id;
    },
    () => {
      if (!this.#canvas.chart) warmUpChartJs();
    },
  );
  readonly #canvas = new ChartCanvasController(this);
  #darkScheme: MediaQueryList | undefined;

  constructor() {
    super();
    this.lazy = true;
    this.export = false;
    this.doughnut = false;
    this.retryPolicy = DEFAULT_RETRY_POLICY;
    this._tableView = false;
    this._themeRevision = 0;
  }

  /** The Chart.js instance while a canvas chart is shown (read-only use: tests, advanced hosts). */
  get chart(): Chart | undefined {
    return this.#canvas.chart;
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
    this.#download('csv', `data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`);
  }

  /** Downloads the chart as a PNG image (canvas graph types only). */
  downloadPng(): void {
    const chart = this.#canvas.chart;
    if (chart) this.#download('png', chart.toBase64Image('image/png'));
  }

  /** Downloads under a name taken from the chart's title. */
  #download(extension: 'csv' | 'png', href: string): void {
    downloadFile(this.renderRoot, `${exportFileName(this.payload?.title)}.${extension}`, href);
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
      // A template's `lazy="false"` reaches the property as text in Vue and Svelte.
      lazy: this.lazy !== false && (this.lazy as unknown) !== 'false',
      retryPolicy: this.retryPolicy ?? DEFAULT_RETRY_POLICY,
    };
  }

  #formatters(payload: ChartPayload): ChartFormatters {
    return createFormatters(resolveLocale(this.locale, this), payload.timeZone);
  }

  #heightStyle(): string {
    // Bindings in JSX, Vue and Svelte set a number as it is; the attribute gives text.
    const h = this.height == null ? '' : String(this.height).trim();
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
        ${canvasShown && payload ? this.#canvas.renderLegend(payload) : nothing}
        <div part="body" class="body">
          <div class="chart" ?hidden=${!canvasShown}>
            <canvas
              part="canvas"
              role="img"
              tabindex=${canvasShown ? '0' : '-1'}
              aria-label=${payload && f ? summarizeChart(payload, f) : 'Chart'}
              @keydown=${this.#canvas.onKeydown}
              @blur=${this.#canvas.clearActive}
            ></canvas>
            ${canvasShown ? this.#canvas.renderTooltip() : nothing}
            <div class="visually-hidden" aria-live="polite">${this.#canvas.announcement}</div>
          </div>
          ${mode === 'value' && payload && f ? renderSingleValue(payload, f) : nothing}
          ${
            (mode === 'table' || (mode === 'canvas' && this._tableView)) && payload && f
              ? renderDataTable(payload, f)
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
      this.#canvas.destroy();
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
    const tooltip = this.renderRoot.querySelector<HTMLElement>('.tooltip');
    if (tooltip) this.#canvas.placeTooltip(tooltip);
  }

  #draw(payload: ChartPayload): void {
    const canvas = this.renderRoot.querySelector('canvas');
    const base = this.renderRoot.querySelector('.base');
    if (!canvas || !base) return;
    this.#canvas.draw(canvas, base, payload, {
      formatters: this.#formatters(payload),
      doughnut: this.doughnut,
      dark: this.#isDark(),
      themeRevision: this._themeRevision,
    });
  }

  #toggleTable(): void {
    this._tableView = !this._tableView;
  }
}
