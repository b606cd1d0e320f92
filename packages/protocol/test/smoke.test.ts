import { expect, test } from 'vitest';
import { parseQueryRequest } from '../src/index.ts';

test('smoke', () => {
  expect(
    parseQueryRequest({ graph_type: 'Table', start: 'yesterdayy', end: 'now', split: 'x' }),
  ).toEqual({ ok: false, error: "start: could not parse 'yesterdayy' as a time" });
});
