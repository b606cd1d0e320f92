import type { Envelope } from '@analytics-chart/protocol';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import type { LinePlan, LineWindow } from '../plan/collection-plan.ts';
import { MAX_SPLIT_CELLS } from '../plan/split-series.ts';
import {
  type LineAnswer,
  type LineForm,
  lineEnvelopeOf,
  lineWindowAnswer,
} from '../shape/line-shape.ts';
import { readRows } from './clickhouse-events.ts';
import { clickHouseLineSql } from './line-sql.ts';

/**
 * The six line kinds on ClickHouse, as on DuckDB: per window of the line, render
 * (`line-sql.ts`), run ({@link readRows}) and shape (`shape/line-shape.ts`); the compare window
 * keeps a split line's series.
 */
export async function clickHouseTimeSeries(
  bound: ClickHouseBoundQuery,
  line: LinePlan,
  run: ClickHouseRun,
): Promise<Envelope> {
  const main = await lineWindow(bound, line, line.main, null, run);
  const fixed = line.kind.split ? (main[0]?.series ?? []) : null;
  const second = line.compare ? await lineWindow(bound, line, line.compare, fixed, run) : null;
  return lineEnvelopeOf(line, main, second?.[0] ?? null);
}

/** One window of a line, rendered, run and shaped. */
async function lineWindow(
  bound: ClickHouseBoundQuery,
  line: LinePlan,
  window: LineWindow,
  fixedSeries: readonly string[] | null,
  run: ClickHouseRun,
): Promise<LineAnswer[]> {
  const statement = clickHouseLineSql(bound, line, window, fixedSeries, false);
  let form = statement?.form ?? null;
  let rows = statement ? await readRows(run, statement) : [];
  if (form === 'cells' && rows.length > MAX_SPLIT_CELLS) {
    // Too many cells to rank here: ClickHouse ranks the series and returns the top ones' cells.
    const ranked = clickHouseLineSql(bound, line, window, fixedSeries, true);
    form = 'ranked';
    rows = ranked ? await readRows(run, ranked) : [];
  }
  if (form) checkBucketKeys(window, form, rows);
  return lineWindowAnswer(bound.query, line, window, form, rows, fixedSeries);
}

/** Where each form's rows hold their bucket key (NULL or a unit where the form says so). */
const KEY_COLUMN: Record<LineForm, number> = { populations: 0, running: 0, cells: 1, ranked: 2 };

/**
 * A key ClickHouse computed that the plan does not know is an error, never a dropped event
 * (calendar units are checked by the shape stage, which maps them to buckets).
 */
function checkBucketKeys(window: LineWindow, form: LineForm, rows: readonly unknown[][]): void {
  if (form === 'populations' && window.units) return;
  const known = new Set(window.buckets?.buckets.map((b) => b.key));
  for (const row of rows) {
    const k = row[KEY_COLUMN[form]];
    if (k === null || k === undefined) continue;
    if (!known.has(Number(k)))
      throw new Error(`ClickHouse bucket key ${k} is not in the bucket plan`);
  }
}
