import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import type { ChartErrorCode } from './data/chart-load-error.ts';

/** Detail of `analytics-chart-load`: the payload now shown. */
export interface ChartLoadDetail {
  payload: ChartPayload;
}

/** Detail of `analytics-chart-error`: what failed, for the host to log or react to. */
export interface ChartErrorDetail {
  /** HTTP status, or 0 when the edge could not be reached. */
  status: number;
  message: string;
  code?: ChartErrorCode;
}

/** Detail of `analytics-chart-token-expired`: the expired id and a way to answer with a fresh one. */
export interface ChartTokenExpiredDetail {
  queryId: string;
  /**
   * Call during the event's dispatch (synchronously in the listener) with the new id or a promise of
   * it; the element then skips its own `token-url` request and waits for this answer.
   */
  renew(idOrPromise: string | Promise<string>): void;
}

/** Fired when a payload has been received and drawn. */
export type ChartLoadEvent = CustomEvent<ChartLoadDetail>;
/** Fired when loading failed for good (after retries or renewal). */
export type ChartErrorEvent = CustomEvent<ChartErrorDetail>;
/** Fired when the edge says the query id has expired. */
export type ChartTokenExpiredEvent = CustomEvent<ChartTokenExpiredDetail>;

/** Event names, so hosts can import them instead of spelling them. */
export const CHART_EVENTS = {
  load: 'analytics-chart-load',
  error: 'analytics-chart-error',
  tokenExpired: 'analytics-chart-token-expired',
} as const;

/** Creates one of the element's events: bubbling and composed, so a page listener sees it. */
export function chartEvent<T>(type: string, detail: T): CustomEvent<T> {
  return new CustomEvent(type, { detail, bubbles: true, composed: true });
}

declare global {
  interface GlobalEventHandlersEventMap {
    'analytics-chart-load': ChartLoadEvent;
    'analytics-chart-error': ChartErrorEvent;
    'analytics-chart-token-expired': ChartTokenExpiredEvent;
  }
}
