/**
 * Valid requests generated, not mutated: every collection graph type × every filter operator ×
 * every shape a field can have (a plain value, absent from every event, nested, deeper than the
 * typed paths, array-valued, of mixed types, a literal dotted key), with splits and metrics on
 * the same shapes, and the events they read.
 */
import type { FixtureEvent } from './reference.ts';

export const KEY = 'generated-requests-key';
export const NOW = 1_800_000_000;
export const BASE = NOW - 10 * 86_400;

export const FIELDS = [
  'plain',
  'nowhere',
  'obj.inner',
  'd1.d2.d3.d4.d5.d6.d7.d8',
  'tags',
  'mixed',
  'lit.key',
];
const VALUES: Array<string | number | boolean> = ['a', 3, '3', true, 'x,y', 0.5, ''];

/** Forty events, one every six hours, whose fields take every shape in turn. */
export function events(): FixtureEvent[] {
  const mixed: unknown[] = [3, 'a', true, [1, 'a'], { x: 1 }, null, '3', 0.5, 'x,y', -2];
  return Array.from({ length: 40 }, (_, i) => {
    const json: Record<string, unknown> = {
      plain: i % 3 === 0 ? 'a' : `v${i % 4}`,
      n: i,
      obj: i % 2 ? { inner: i % 5 } : { inner: 'a' },
      d1: { d2: { d3: { d4: { d5: { d6: { d7: { d8: i % 4 === 0 ? 'a' : i } } } } } } },
      tags: i % 4 === 3 ? 'a' : ['a', String(i % 3), i % 2 === 0],
      mixed: mixed[i % mixed.length],
    };
    if (i % 3 === 1) json['lit.key'] = i;
    if (i % 6 === 2) json.lit = { key: 'a' };
    return { timestamp: BASE + i * 21_600, json };
  });
}

/** The request for one combination; the split and metric rotate through the field shapes. */
export function request(graphType: string, operator: string, field: string, i: number) {
  const value = VALUES[i % VALUES.length] as string | number | boolean;
  const other = FIELDS[(i + 1) % FIELDS.length] as string;
  const numeric = i % 2 === 0;
  const body: Record<string, unknown> = {
    api_key: KEY,
    graph_type: graphType,
    start: BASE - 1,
    end: NOW,
    IANA_time_zone: 'Asia/Kathmandu',
    filters: [[field, operator, value]],
    aggregation: numeric ? 'Sum' : 'P90',
    metric: i % 3 === 0 ? field : other,
    split: i % 2 === 0 ? field : other,
  };
  if (graphType === 'Ratio Line') {
    body.numerator_filters = [[other, operator, value]];
    body.denominator_filters = [[field, '≠', value]];
  }
  if (graphType === 'Compare Line') body.compare_filters = [[other, operator, value]];
  if (graphType === 'Samples') body.order = i % 2 ? 'Ascending' : 'Descending';
  return body;
}
