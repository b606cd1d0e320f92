/** The six time-series graph types. */
export type LineGraphType =
  | 'Single Line'
  | 'Cumulative Line'
  | 'Ratio Line'
  | 'Compare Line'
  | 'Multi Line'
  | 'Stacked Line';

/**
 * What one line kind draws, the one description both dialects' renderers read:
 *
 * - `value`: per bucket, the aggregate over the bucket (`bucket`), over the window's start to
 *   the bucket's end (`running`), or over `numerator_filters` divided by the one over
 *   `denominator_filters`, null over 0 (`ratio`);
 * - `split`: one series per split value, the top 10 by their whole-window value, in wide rows;
 *   the compare window keeps the main window's series;
 * - `second`: what `compare_result` holds: the same line over the compare window, when the
 *   request has one, or the line over `filters ∧ compare_filters` in the same window.
 */
export interface LineKind {
  value: 'bucket' | 'running' | 'ratio';
  split: boolean;
  second: 'compare window' | 'compare filters';
}

export const LINE_KINDS: Readonly<Record<LineGraphType, LineKind>> = {
  'Single Line': { value: 'bucket', split: false, second: 'compare window' },
  'Cumulative Line': { value: 'running', split: false, second: 'compare window' },
  'Ratio Line': { value: 'ratio', split: false, second: 'compare window' },
  'Compare Line': { value: 'bucket', split: false, second: 'compare filters' },
  'Multi Line': { value: 'bucket', split: true, second: 'compare window' },
  'Stacked Line': { value: 'bucket', split: true, second: 'compare window' },
};

/** The kind of a time-series graph type (a Single Line for any other). */
export function lineKind(graphType: string): LineKind {
  return LINE_KINDS[graphType as LineGraphType] ?? LINE_KINDS['Single Line'];
}
