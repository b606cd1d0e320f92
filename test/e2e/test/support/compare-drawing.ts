import { expect } from 'vitest';
import type { DrawnChart } from './drawn-charts.ts';
import type { Drawing } from './expected-charts.ts';

/** A number as the element shows it (`12,345.67`, `−3`), read back. */
export function shownNumber(text: string | undefined): number {
  const cleaned = (text ?? '').replace(/,/g, '').replace('−', '-').trim();
  const n = Number(cleaned);
  if (cleaned === '' || Number.isNaN(n)) throw new Error(`'${text}' is not a number as shown`);
  return n;
}

/** Shown numbers carry at most two decimals. */
function rounded(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Unix seconds as the Samples table shows them (medium date and time, in the chart's zone). */
function shownTimestamp(seconds: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-US', {
    dateStyle: 'medium',
    timeStyle: 'medium',
    timeZone,
  }).format(new Date(seconds * 1000));
}

/**
 * Asserts that a chart on the page shows exactly what the engine's answer implies: every label,
 * series name and value of a canvas chart; the number and comparison of a Single Value; every
 * cell of a table.
 */
export function expectDrawnToMatch(drawn: DrawnChart, expected: Drawing, timeZone = 'UTC'): void {
  const what = `${drawn.query ?? drawn.title} (${expected.graph})`;
  expect(drawn.graph, what).toBe(expected.graph);
  if (expected.series) {
    expect(drawn.mode, what).toBe('canvas');
    expect(drawn.labels, `${what}: labels`).toEqual(expected.labels);
    expect(
      drawn.series?.map((s) => s.name),
      `${what}: series`,
    ).toEqual(expected.series.map((s) => s.name));
    for (const [i, series] of expected.series.entries()) {
      expect(drawn.series?.[i]?.values, `${what}: values of ${series.name}`).toEqual(series.values);
    }
    expect(
      expected.series.some((s) => s.values.some((v) => v !== null && v !== 0)),
      `${what}: the engine's answer has data`,
    ).toBe(true);
    return;
  }
  if (expected.value !== undefined) {
    expect(drawn.mode, what).toBe('value');
    expect(shownNumber(drawn.valueText), `${what}: value`).toBe(
      rounded(expected.value ?? Number.NaN),
    );
    if (expected.compareValue !== undefined && expected.compareValue !== null) {
      const versus = /^vs (.+) in the previous period$/.exec(drawn.versusText ?? '');
      expect(versus, `${what}: comparison line '${drawn.versusText}'`).not.toBeNull();
      expect(shownNumber(versus?.[1]), `${what}: compare value`).toBe(
        rounded(expected.compareValue),
      );
    }
    return;
  }
  expect(drawn.mode, what).toBe('table');
  expect(drawn.columns, `${what}: columns`).toEqual(expected.columns);
  expect(drawn.rows?.length, `${what}: rows`).toBe(expected.rows?.length);
  expect(expected.rows?.length, `${what}: the engine's answer has rows`).toBeGreaterThan(0);
  for (const [r, row] of (expected.rows ?? []).entries()) {
    for (const [c, cell] of row.entries()) {
      const shown = drawn.rows?.[r]?.[c];
      const where = `${what}: row ${r}, ${expected.columns?.[c]}`;
      if (expected.graph === 'Samples' && c === 0) {
        expect(shown, where).toBe(shownTimestamp(Number(cell), timeZone));
      } else if (typeof cell === 'number') {
        expect(shownNumber(shown), where).toBe(rounded(cell));
      } else {
        expect(shown, where).toBe(cell === undefined || cell === null ? '' : String(cell));
      }
    }
  }
}
