import { describe, expect, it } from 'vitest';
import {
  type CollectionQuery,
  isSqlQuery,
  parseQueryRequest,
  pickGranularity,
  resolveWindows,
} from '../src/index.ts';

const utc = (y: number, mo: number, d: number, h = 0, mi = 0) =>
  Date.UTC(y, mo - 1, d, h, mi) / 1000;

function query(body: Record<string, unknown>): CollectionQuery {
  const parsed = parseQueryRequest({ graph_type: 'Single Line', ...body });
  if (!parsed.ok || isSqlQuery(parsed.value)) throw new Error('bad fixture');
  return parsed.value;
}

describe('resolveWindows', () => {
  const now = utc(2024, 3, 11, 19); // 2024-03-11 12:00 PDT

  it('resolves start and end in the query zone', () => {
    const result = resolveWindows(query({ start: '2024-03-10', end: '2024-03-11' }), now);
    expect(result).toEqual({
      ok: true,
      value: { window: { start: utc(2024, 3, 10, 8), end: utc(2024, 3, 11, 7) } },
    });
  });

  it('shifts the compare window on the wall clock', () => {
    const result = resolveWindows(
      query({ start: '2024-03-10', end: '2024-03-11', compare: '1 week ago' }),
      now,
    );
    expect(result).toEqual({
      ok: true,
      value: {
        window: { start: utc(2024, 3, 10, 8), end: utc(2024, 3, 11, 7) },
        compare: { start: utc(2024, 3, 3, 8), end: utc(2024, 3, 4, 8) },
      },
    });
  });

  it('refuses an empty or inverted window, naming start', () => {
    expect(resolveWindows(query({ start: 'now', end: 'now' }), now)).toEqual({
      ok: false,
      error: 'start: must be earlier than end',
    });
    expect(resolveWindows(query({ start: 'now', end: '1 day ago' }), now)).toEqual({
      ok: false,
      error: 'start: must be earlier than end',
    });
  });

  it('refuses times that resolve out of range', () => {
    expect(resolveWindows(query({ start: '60 years ago', end: 'now' }), now)).toEqual({
      ok: false,
      error: "start: '60 years ago' is out of range",
    });
    expect(
      resolveWindows(query({ start: 86400 * 3, end: 86400 * 4, compare: '1 month ago' }), now),
    ).toEqual({ ok: false, error: "compare: '1 month ago' moves the window out of range" });
  });
});

describe('pickGranularity', () => {
  const span = (seconds: number) => ({ start: 1_000_000, end: 1_000_000 + seconds });
  const H = 3600;
  const D = 86400;
  it.each([
    [3 * H, 'Minute'],
    [3 * H + 1, 'Hour'],
    [3 * D, 'Hour'],
    [3 * D + 1, 'Day'],
    [92 * D, 'Day'],
    [92 * D + 1, 'Week'],
    [366 * D, 'Week'],
    [366 * D + 1, 'Month'],
  ])('Auto over %i seconds is %s', (seconds, expected) => {
    expect(pickGranularity('Auto', span(seconds))).toBe(expected);
  });

  it('keeps an explicit granularity', () => {
    expect(pickGranularity('Hour', span(400 * D))).toBe('Hour');
  });
});
