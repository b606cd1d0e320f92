import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { type ChartErrorDetail, type ChartTokenExpiredDetail, chartEvent } from '../events.ts';
import { type ChartLoadError, ERROR_TEXT, isTransient } from './chart-load-error.ts';
import { renewQueryId } from './renew-query-id.ts';
import { requestChartData } from './request-chart-data.ts';
import { type RetryPolicy, retryDelay } from './retry-delay.ts';

/** Everything the controller reads from its element, resolved (defaults applied) on each update. */
export interface ChartDataConfig {
  queryId: string | undefined;
  endpoint: string;
  range: string | undefined;
  credentials: RequestCredentials;
  tokenUrl: URL;
  /** Seconds between refreshes; 0 for none. */
  refresh: number;
  lazy: boolean;
  retryPolicy: RetryPolicy;
}

/** Where loading stands: nothing asked yet, first load pending, data shown, or failed for good. */
export type ChartDataStatus = 'idle' | 'loading' | 'ready' | 'error';

type HostElement = ReactiveControllerHost & HTMLElement;

/** Margin around the viewport inside which a lazy chart starts loading, so it is ready on arrival. */
const LAZY_MARGIN = '200px';

/**
 * Owns the data side of one chart: fetch with abort, bounded retries, 429 waits, ETag revalidation,
 * token renewal, lazy loading and refresh while visible. The element only renders what it exposes.
 * Every timer, observer, listener and request it starts ends in `hostDisconnected`.
 */
export class ChartDataController implements ReactiveController {
  status: ChartDataStatus = 'idle';
  payload: ChartPayload | undefined;
  error: ChartLoadError | undefined;
  /** A request is in flight or a retry is scheduled. */
  busy = false;

  readonly #host: HostElement;
  readonly #config: () => ChartDataConfig;
  readonly #applyRenewedId: (id: string) => void;
  readonly #onRequest: () => void;
  #connected = false;
  #key: string | undefined;
  #refreshSeconds = 0;
  #etag: string | undefined;
  #abort: AbortController | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempt = 0;
  #renewals = 0;
  #keepData = false;
  #resumeKey: string | undefined;
  #wanted: 'none' | 'load' | 'refresh' = 'none';
  #intersecting = false;
  #observer: IntersectionObserver | undefined;
  #loaded: ChartPayload | undefined;

  /**
   * @param config reads the element's current settings
   * @param applyRenewedId puts a renewed id into the element (which re-fetches with it)
   * @param onRequest runs right after a data request went out: work that can overlap the wait
   */
  constructor(
    host: HostElement,
    config: () => ChartDataConfig,
    applyRenewedId: (id: string) => void,
    onRequest: () => void = () => {},
  ) {
    this.#host = host;
    this.#config = config;
    this.#applyRenewedId = applyRenewedId;
    this.#onRequest = onRequest;
    host.addController(this);
  }

  hostConnected(): void {
    this.#connected = true;
    this.#observer = new IntersectionObserver(
      (entries) => {
        const entry = entries[entries.length - 1];
        if (!entry) return;
        this.#intersecting = entry.isIntersecting;
        this.#maybeLoad();
      },
      { rootMargin: LAZY_MARGIN },
    );
    this.#observer.observe(this.#host);
    document.addEventListener('visibilitychange', this.#onVisibilityChange);
    // Lit does not update on reconnection by itself; the update re-reads the config and reloads.
    this.#host.requestUpdate();
  }

  hostDisconnected(): void {
    this.#connected = false;
    this.#cancel();
    this.#observer?.disconnect();
    this.#observer = undefined;
    document.removeEventListener('visibilitychange', this.#onVisibilityChange);
    this.#intersecting = false;
    this.#wanted = 'none';
    // A re-attached element shows what it had and revalidates it (If-None-Match makes that cheap).
    this.#resumeKey = this.#key;
    this.#key = undefined;
  }

  hostUpdate(): void {
    if (!this.#connected) return;
    const config = this.#config();
    const key = config.queryId
      ? JSON.stringify([config.queryId, config.endpoint, config.range ?? '', config.credentials])
      : '';
    if (key !== this.#key) {
      const resuming = key === this.#resumeKey;
      this.#key = key;
      this.#resumeKey = undefined;
      this.#refreshSeconds = config.refresh;
      this.#restart(config, resuming);
    } else if (config.refresh !== this.#refreshSeconds) {
      this.#refreshSeconds = config.refresh;
      if (this.status === 'ready' && !this.busy) this.#scheduleRefresh(config);
    }
  }

  /** Loads again now, as the error state's Retry button does; retries start from zero. */
  reload(): void {
    this.#cancel();
    this.#attempt = 0;
    this.#renewals = 0;
    if (!this.#config().queryId || !this.#connected) return;
    if (!this.payload) this.#setStatus('loading');
    this.#wanted = 'load';
    this.#maybeLoad();
  }

  /** The payload that arrived since the last call, once: the element fires its load event after drawing it. */
  takeLoaded(): ChartPayload | undefined {
    const loaded = this.#loaded;
    this.#loaded = undefined;
    return loaded;
  }

  #restart(config: ChartDataConfig, resuming: boolean): void {
    this.#cancel();
    this.#attempt = 0;
    if (!this.#keepData && !resuming) {
      this.payload = undefined;
      this.#etag = undefined;
      this.#renewals = 0;
    }
    this.#keepData = false;
    this.error = undefined;
    if (!config.queryId) {
      this.#setStatus('idle');
      return;
    }
    this.status = this.payload ? 'ready' : 'loading';
    this.#wanted = 'load';
    this.#maybeLoad();
  }

  #onVisibilityChange = (): void => this.#maybeLoad();

  /** Starts the wanted load when the chart may load now: lazy waits for the viewport, refresh for visibility. */
  #maybeLoad(): void {
    if (this.#wanted === 'none' || !this.#connected) return;
    const config = this.#config();
    const visible = this.#intersecting && document.visibilityState === 'visible';
    const allowed = this.#wanted === 'refresh' ? visible : !config.lazy || this.#intersecting;
    if (!allowed) return;
    this.#wanted = 'none';
    void this.#load(config);
  }

  async #load(config: ChartDataConfig): Promise<void> {
    const queryId = config.queryId;
    if (!queryId) return;
    this.#abort?.abort();
    const abort = new AbortController();
    this.#abort = abort;
    this.#setBusy(true);
    let result: Awaited<ReturnType<typeof requestChartData>>;
    try {
      const pending = requestChartData({
        endpoint: config.endpoint,
        queryId,
        range: config.range,
        etag: this.payload ? this.#etag : undefined,
        credentials: config.credentials,
        signal: abort.signal,
      });
      this.#onRequest();
      result = await pending;
    } catch {
      return; // aborted: whoever aborted has taken over
    }
    if (abort.signal.aborted) return;
    this.#abort = undefined;

    if (result.kind === 'error') {
      this.#handleError(result.error, config);
      return;
    }
    this.#attempt = 0;
    this.#renewals = 0;
    this.error = undefined;
    if (result.kind === 'payload') {
      this.payload = result.payload;
      this.#etag = result.etag;
      this.#loaded = result.payload;
    }
    this.busy = false;
    this.#setStatus(this.payload ? 'ready' : 'loading');
    this.#scheduleRefresh(config);
  }

  #handleError(error: ChartLoadError, config: ChartDataConfig): void {
    if (error.code === 'expired') {
      void this.#renew(error, config);
      return;
    }
    const rateLimited = error.code === 'rate_limited';
    if ((isTransient(error) || rateLimited) && this.#attempt < config.retryPolicy.retries) {
      const delay =
        rateLimited && error.retryAfter !== undefined
          ? error.retryAfter * 1000
          : retryDelay(this.#attempt, config.retryPolicy);
      this.#attempt++;
      // A rate limit is worth telling while waiting; a network blip is not (the skeleton stays).
      if (rateLimited && !this.payload) {
        this.error = error;
        this.status = 'error';
      }
      this.#setBusy(true);
      this.#schedule(delay, () => void this.#load(this.#config()));
      return;
    }
    this.#fail(error, config);
  }

  async #renew(expired: ChartLoadError, config: ChartDataConfig): Promise<void> {
    const oldId = config.queryId;
    // One renewal per load: an id that is expired again at once would otherwise loop.
    if (!oldId || this.#renewals >= 1) {
      this.#fail(expired, config);
      return;
    }
    this.#renewals++;
    let answer: Promise<string> | undefined;
    const detail: ChartTokenExpiredDetail = {
      queryId: oldId,
      renew: (idOrPromise) => {
        answer ??= Promise.resolve(idOrPromise);
      },
    };
    this.#host.dispatchEvent(chartEvent('analytics-chart-token-expired', detail));
    const abort = new AbortController();
    this.#abort = abort;
    this.#setBusy(true);
    answer ??= renewQueryId(config.tokenUrl, oldId, config.credentials, abort.signal);
    let id: string;
    try {
      id = await answer;
    } catch {
      if (!abort.signal.aborted) this.#fail(expired, config);
      return;
    }
    if (abort.signal.aborted) return;
    this.#abort = undefined;
    if (typeof id !== 'string' || !id || id === oldId) {
      this.#fail(expired, config);
      return;
    }
    // The new id goes through the element's property like any change; the data stays on screen.
    this.#keepData = true;
    this.#applyRenewedId(id);
  }

  #fail(error: ChartLoadError, config: ChartDataConfig): void {
    this.error = error;
    this.busy = false;
    this.#setStatus('error');
    const detail: ChartErrorDetail = {
      status: error.status,
      message: error.message || ERROR_TEXT[error.code],
      code: error.code,
    };
    this.#host.dispatchEvent(chartEvent('analytics-chart-error', detail));
    // Failures that can pass on their own are tried again at the refresh cadence.
    if (isTransient(error) || error.code === 'timeout' || error.code === 'rate_limited') {
      this.#scheduleRefresh(config);
    }
  }

  #scheduleRefresh(config: ChartDataConfig): void {
    this.#clearTimer();
    if (config.refresh <= 0) return;
    this.#schedule(config.refresh * 1000, () => {
      this.#attempt = 0;
      this.#wanted = 'refresh';
      this.#maybeLoad();
    });
  }

  #schedule(ms: number, run: () => void): void {
    this.#clearTimer();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      run();
    }, ms);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #cancel(): void {
    this.#abort?.abort();
    this.#abort = undefined;
    this.#clearTimer();
    this.#wanted = 'none';
    this.busy = false;
  }

  #setBusy(busy: boolean): void {
    this.busy = busy;
    this.#host.requestUpdate();
  }

  #setStatus(status: ChartDataStatus): void {
    this.status = status;
    this.#host.requestUpdate();
  }
}
