/**
 * The chart payload: what the edge sends the element. Only what a chart needs; no key, no
 * collection name, no SQL. This module has no runtime imports so the element can import its
 * types without pulling zod into the browser bundle.
 */

import type { GraphType } from './vocabulary.ts';

/** One line, bar set or slice set. `null` marks a bucket with no value (Avg of nothing). */
export interface ChartSeries {
  name: string;
  values: (number | null)[];
}

/** The comparison window or population, on its own labels. */
export interface ChartComparison {
  labels: string[];
  series: ChartSeries[];
}

/** Everything the element needs to draw one chart. */
export interface ChartPayload {
  /** Every collection and SQL graph type can arrive here. */
  graph: GraphType;
  title?: string;
  /** Resolved granularity of a time series (`Day`, `Hour`…). */
  granularity?: string;
  /** The zone the labels are in. */
  timeZone: string;
  /** Bucket labels (time series) or category labels (Bar, Pie, Funnel). */
  labels: string[];
  series: ChartSeries[];
  compare?: ChartComparison;
  /** Single Value's number. */
  value?: number | null;
  compareValue?: number | null;
  /** Table and Samples: column names and rows in that order. */
  columns?: string[];
  rows?: unknown[][];
  /** The aggregation over the whole window, and over the comparison window. */
  combined?: number | null;
  compareCombined?: number | null;
  /**
   * The resolved window in whole Unix seconds, for summaries such as the accessible label. Like
   * every window it excludes both ends, and it is rounded outward (start down, end up), so it
   * covers exactly the whole-second events the query counted.
   */
  range?: { start: number; end: number };
  /**
   * Time series only: which end buckets cover only part of their period because the window
   * starts or ends inside them (today so far). A widget draws them apart so that a partial day
   * does not read as a drop.
   */
  incomplete?: { first: boolean; last: boolean };
  /** True when rows were cut at a cap. */
  truncated?: boolean;
  /** ISO instants: when the data was computed, and until when a cached copy is fresh. */
  generatedAt: string;
  expiresAt: string;
}
