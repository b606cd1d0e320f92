import type { DuckDBConnection } from '@duckdb/node-api';
import type { SeenKey } from '../seen-key.ts';
import {
  type CollectionEntry,
  columnName,
  ENGINE_SCHEMA,
  ingestOrderSql,
  type KeyColumns,
  keyColumn,
  SEQ_COLUMN,
  type Segment,
  segmentTable,
  segmentTableName,
} from './catalog.ts';
import { insertEvents } from './key-typing.ts';
import { quoteIdentifier } from './quote-identifier.ts';
import { coalesceRollups } from './rollups.ts';
import type { SqlParams } from './sql-params.ts';
import type { WorkspaceDb } from './workspace-db.ts';

/**
 * Clustering a collection's rows: each event table rewritten in the order of one key's stored
 * text, then time, so that DuckDB's min/max per row group lets a filter on that key skip the
 * row groups of every other value, while a time window still skips by `timestamp` within each
 * value's run; or in time order where the workspace's rollups keep that key
 * ({@link ordersByTime}). Ingest order, which Samples page by within a second, is kept in the
 * column `seq` (see {@link ingestOrderSql}).
 */

/** Rows sampled to choose the key; the choice needs the shape of the data, not every row. */
const SAMPLE_ROWS = 20_000;
/** Keys with more distinct values in the sample are not candidates: too many runs to skip by. */
const MAX_VALUES = 64;
/** Key paths whose presence makes up an event's shape, at most (the first ones, by id). */
const MAX_SHAPE_KEYS = 256;
/**
 * Time-ordered runs a segment kept in time order may hold after a load, at most, before the load
 * rewrites it in one time order: a window's edge reads one row group from every run that covers
 * its seconds, and a load of events spanning the whole range adds a run that covers every second.
 */
export const MAX_TIME_RUNS = 8;

/** What clustering did to one segment. */
export interface ClusteredSegment {
  table: string;
  /** The key it was ordered by, or null when no key tells events apart (left in ingest order). */
  field: string | null;
  /** Ordered by time instead, because the rollups keep `field` ({@link ordersByTime}). */
  byTime?: true;
  /** The whole segment was rewritten in time order, its runs being too many ({@link MAX_TIME_RUNS}). */
  rewritten?: true;
  rows: number;
}

/**
 * Whether rows that would be clustered by `key` go in time order instead: where the workspace's
 * rollups keep the key, the windows that filter or split by it mostly read the rollups, and the
 * events they read are the seconds at a window's edges, which time order keeps to one short run
 * of rows per load rather than one per value of the key.
 */
export function ordersByTime(entry: CollectionEntry, key: KeyColumns): boolean {
  const [name] = key.path;
  return (
    key.path.length === 1 && name !== undefined && (entry.rollup?.keyColumn(name) ?? null) !== null
  );
}

/** How {@link clusterCollection} orders rows. */
export interface ClusterOptions {
  /**
   * The top-level key to order by, instead of the one {@link chooseClusterKey} finds; a table
   * without a string column for it is left as it is.
   */
  field?: string;
  /** Runs a time-ordered segment may hold after a load (default {@link MAX_TIME_RUNS}). */
  maxTimeRuns?: number;
}

/**
 * Rewrites every event table of `collection` ordered by its clustering key (see
 * {@link chooseClusterKey}), then `timestamp`, then ingest order; a table for which no key
 * qualifies is left as it is. Runs as one write transaction of the workspace: queries see the
 * old tables until it commits, and appends wait for it.
 */
export async function clusterCollection(
  db: WorkspaceDb,
  collection: string,
  options: ClusterOptions = {},
): Promise<ClusteredSegment[]> {
  if (!db.catalog.get(collection)) return [];
  return db.write(async (tx) => {
    const entry = await tx.collection(collection);
    const done: ClusteredSegment[] = [];
    for (const [n, segment] of entry.segments.entries()) {
      const key =
        options.field === undefined
          ? await chooseClusterKey(tx.conn, entry, segment)
          : fieldKey(entry, segment, options.field);
      if (!key) {
        done.push({ table: segment.table, field: null, rows: 0 });
        continue;
      }
      const byTime = ordersByTime(entry, key);
      const rows = await rewriteOrdered(tx.conn, tx.payloadType, entry, n, key, byTime);
      done.push({ table: segment.table, field: key.field, rows, ...(byTime ? { byTime } : {}) });
    }
    await coalesceRollups(tx.conn, entry.rollup);
    return done;
  });
}

/** Events staged for one segment, as {@link appendStaged} reads them. */
export interface StagedRows {
  /** The key paths they hold. */
  keys: SeenKey[];
  events: number;
  /**
   * Their `(ts, payload, ord)` relation: `ord` counting from `base` in ingest order, or with
   * `limit` only about that many, the first of each staged part, adding its own parameters.
   */
  source: (params: SqlParams, options: { base: number } | { limit: number }) => string;
  /**
   * The same events cut into consecutive runs of staged parts, in ingest order, each small
   * enough for DuckDB to sort within the load's memory limit: each run is ordered on its own.
   */
  runs: ReadonlyArray<Pick<StagedRows, 'events' | 'source'>>;
}

/**
 * Appends staged events (per segment of `collection`, read from where the loader staged them)
 * typed and ordered in one statement per run of staged parts (see {@link StagedRows.runs}), by
 * the segment's clustering key (chosen on a sample of
 * the staged events, or `options.field`), then `timestamp`, then ingest order, carried in
 * `seq`; in ingest order where no key qualifies. Each run is an ordered run of its own, which
 * row groups' min/max skip as well; a segment kept in time order that would then hold more than
 * `options.maxTimeRuns` runs ({@link MAX_TIME_RUNS}) is rewritten whole in one time order. One
 * write transaction: the load commits whole.
 */
export async function appendStaged(
  db: WorkspaceDb,
  collection: string,
  staged: ReadonlyMap<number, StagedRows>,
  options: ClusterOptions = {},
): Promise<ClusteredSegment[]> {
  if (!db.catalog.get(collection)) return [];
  return db.write(async (tx) => {
    const { conn } = tx;
    const entry = await tx.collection(collection);
    const done: ClusteredSegment[] = [];
    for (const [n, segment] of entry.segments.entries()) {
      const rows = staged.get(n);
      if (!rows || rows.events === 0) continue;
      // insertEvents writes to an entry's last segment.
      const upTo = { ...entry, segments: entry.segments.slice(0, n + 1) };
      const key =
        options.field === undefined
          ? await chooseStagedKey(conn, upTo, segment, rows)
          : fieldKey(entry, segment, options.field);
      let base = 0;
      const seq = quoteIdentifier(SEQ_COLUMN);
      if (key) {
        if (!segment.reordered) {
          await conn.run(`ALTER TABLE ${segment.table} ADD COLUMN ${seq} BIGINT`);
          segment.reordered = true;
        }
        // Every row already there has an ingest order below its count (row ids, or seq values
        // that were row ids), so the new rows' orders start there.
        const counted = await conn.runAndReadAll(`SELECT count(*) FROM ${segment.table}`);
        base = Number(counted.getRows()[0]?.[0] ?? 0);
      }
      const byTime = key !== null && ordersByTime(entry, key);
      let written = 0;
      const starts: number[] = [];
      for (const run of rows.runs) {
        const from = base + written;
        starts.push(from);
        written += await insertEvents(
          conn,
          upTo,
          rows.keys,
          (params) => run.source(params, { base: from }),
          undefined,
          undefined,
          key ? { key, seq, time: byTime } : { key: null },
        );
      }
      if (written !== rows.events) {
        throw new Error(`staged ${rows.events} events, but DuckDB read ${written}`);
      }
      const rewritten =
        byTime &&
        key !== null &&
        base > 0 &&
        (await runsAfterAppend(conn, entry.id, n, starts)) > (options.maxTimeRuns ?? MAX_TIME_RUNS);
      if (rewritten) await rewriteOrdered(conn, tx.payloadType, entry, n, key, true);
      done.push({
        table: segment.table,
        field: key?.field ?? null,
        rows: written,
        ...(byTime ? { byTime } : {}),
        ...(rewritten ? { rewritten } : {}),
      });
    }
    await coalesceRollups(conn, entry.rollup);
    return done;
  });
}

/**
 * {@link chooseClusterKey} on a sample of staged events: the first ones of each staged part,
 * typed into a temporary table with the segment's columns.
 */
async function chooseStagedKey(
  conn: DuckDBConnection,
  upTo: CollectionEntry,
  segment: Segment,
  rows: StagedRows,
): Promise<KeyColumns | null> {
  const n = upTo.segments.length - 1;
  const names = (await columnsOf(conn, upTo.id, n)).map(quoteIdentifier);
  const sample = 'temp.main.load_sample';
  await conn.run(`DROP TABLE IF EXISTS ${sample}`);
  await conn.run(
    `CREATE TEMP TABLE load_sample AS SELECT ${names.join(', ')} FROM ${segment.table} LIMIT 0`,
  );
  await insertEvents(
    conn,
    upTo,
    rows.keys,
    (params) => rows.source(params, { limit: SAMPLE_ROWS }),
    sample,
  );
  const key = await chooseClusterKey(conn, upTo, { ...segment, table: sample });
  // Not in a finally: a failure has aborted the transaction, and a DROP would only replace its
  // message with DuckDB's "transaction is aborted".
  await conn.run(`DROP TABLE IF EXISTS ${sample}`);
  return key;
}

/**
 * The time-ordered runs of segment `n` of collection `id` as its committed row groups show them:
 * one, and one more at every row group whose first second is before the last one of the group
 * before it (none for an empty table), read from DuckDB's statistics rather than the rows.
 */
export async function timeRuns(
  conn: DuckDBConnection,
  id: number,
  n: number,
): Promise<{ runs: number; last: number | null }> {
  const bound = (name: string, f: string) =>
    `${f}(regexp_extract(stats, '${name}: (-?[0-9]+)', 1)::BIGINT)`;
  const reader = await conn.runAndReadAll(
    `SELECT (count(*) FILTER (WHERE lo < prev) + (count(*) > 0)::INTEGER)::INTEGER, arg_max(hi, g)
     FROM (SELECT g, lo, hi, lag(hi) OVER (ORDER BY g) AS prev
       FROM (SELECT row_group_id AS g, ${bound('Min', 'min')} AS lo, ${bound('Max', 'max')} AS hi
         FROM pragma_storage_info($1) WHERE column_name = 'timestamp' AND segment_type <> 'VALIDITY'
         GROUP BY g))`,
    [`${ENGINE_SCHEMA}.${segmentTableName(id, n)}`],
  );
  const [runs, last] = reader.getRows()[0] ?? [];
  return {
    runs: Number(runs ?? 0),
    last: last === null || last === undefined ? null : Number(last),
  };
}

/**
 * The time-ordered runs segment `n` of collection `id` will hold once this transaction's rows
 * commit, which its row groups do not show yet: its committed runs ({@link timeRuns}), and one
 * more for every staged run of the appended rows (the first ingest order of each in `starts`)
 * whose first second is before the last second of the rows before it. A load's staged runs are
 * consecutive parts of its file, often of consecutive times, which then make one run.
 */
async function runsAfterAppend(
  conn: DuckDBConnection,
  id: number,
  n: number,
  starts: readonly number[],
): Promise<number> {
  let { runs, last } = await timeRuns(conn, id, n);
  if (starts.length === 0) return runs;
  const seq = quoteIdentifier(SEQ_COLUMN);
  const which = starts
    .slice(1)
    .map((_, i) => `WHEN ${seq} < $${i + 2} THEN ${i}`)
    .join(' ');
  const reader = await conn.runAndReadAll(
    `SELECT r, min("timestamp"), max("timestamp")
     FROM (SELECT ${starts.length > 1 ? `CASE ${which} ELSE ${starts.length - 1} END` : '0'} AS r, "timestamp"
       FROM ${segmentTable(id, n)} WHERE ${seq} >= $1)
     GROUP BY r ORDER BY r`,
    starts.map((start) => BigInt(start)),
  );
  for (const [, lo, hi] of reader.getRows()) {
    if (last === null || Number(lo) < last) runs++;
    last = Number(hi);
  }
  return runs;
}

/** The top-level key `field` of `entry`, if segment has its string column. */
function fieldKey(entry: CollectionEntry, segment: Segment, field: string): KeyColumns | null {
  return (
    entry.keys.find(
      (k) => k.path.length === 1 && k.path[0] === field && segment.columns.has(columnName(k, 's')),
    ) ?? null
  );
}

/** The columns of segment `n` of collection `id`, but `seq`, in table order. */
async function columnsOf(conn: DuckDBConnection, id: number, n: number): Promise<string[]> {
  const reader = await conn.runAndReadAll(
    `SELECT column_name FROM duckdb_columns()
     WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2
     ORDER BY column_index`,
    [ENGINE_SCHEMA, segmentTableName(id, n)],
  );
  return reader
    .getRows()
    .map(([c]) => String(c))
    .filter((c) => c !== SEQ_COLUMN);
}

/**
 * The key a segment's rows are clustered by: among the top-level keys with a string column that
 * at least half of a sample of its events hold, with 2 to {@link MAX_VALUES} distinct values,
 * the one that best tells which keys an event holds (the least conditional entropy of the
 * event's set of key paths given the key's value, a missing value counting as one more value),
 * if it explains at least half of that set's entropy; ties go to fewer values, then to the older
 * key. In event data this is the event's name or type, whose value decides the rest of its
 * payload and is what filters most often name; data whose events all look alike has no such
 * key and keeps its ingest order, which is time order already.
 */
export async function chooseClusterKey(
  conn: DuckDBConnection,
  entry: CollectionEntry,
  segment: Segment,
): Promise<KeyColumns | null> {
  const has = (key: KeyColumns, kind: 's' | 'n' | 'a') =>
    segment.columns.has(columnName(key, kind));
  const candidates = entry.keys.filter((k) => k.path.length === 1 && has(k, 's'));
  if (candidates.length === 0) return null;
  const shapeKeys = entry.keys
    .filter((k) => has(k, 's') || has(k, 'n') || has(k, 'a'))
    .slice(0, MAX_SHAPE_KEYS);
  const presence = shapeKeys.map((k) => {
    const columns = (['s', 'n', 'a'] as const).filter((kind) => has(k, kind));
    return `(${columns.map((kind) => `${keyColumn(k, kind)} IS NOT NULL`).join(' OR ')})::INT::VARCHAR`;
  });
  const counted = await conn.runAndReadAll(`SELECT count(*) FROM ${segment.table}`);
  const count = Number(counted.getRows()[0]?.[0] ?? 0);
  // Whole vectors at random (fixed seed: the same data gets the same choice): reading a few
  // vectors is what keeps the choice cheap beside the rewrite.
  const sample =
    count > SAMPLE_ROWS
      ? `USING SAMPLE ${((100 * SAMPLE_ROWS) / count).toFixed(6)}% (system, 42)`
      : '';
  const reader = await conn.runAndReadAll(
    `SELECT concat(${presence.join(', ')}), ${candidates.map((k) => keyColumn(k, 's')).join(', ')}
     FROM ${segment.table} ${sample}`,
  );
  const rows = reader.getRows();
  if (rows.length === 0) return null;
  const shapes = rows.map((row) => String(row[0]));
  const total = shapes.length;
  const shapeEntropy = entropy(countBy(shapes), total);
  // Events that all hold the same keys leave nothing for a key to tell apart.
  if (shapeEntropy === 0) return null;
  let best: { key: KeyColumns; conditional: number; values: number } | null = null;
  for (const [i, key] of candidates.entries()) {
    const values = rows.map((row) => row[i + 1] ?? null);
    const held = values.filter((v) => v !== null).length;
    const distinct = new Set(values.filter((v) => v !== null)).size;
    if (held * 2 < total || distinct < 2 || distinct > MAX_VALUES) continue;
    // H(shape | value) = Σ over values of p(value) · H(shape among events with that value).
    const byValue = new Map<unknown, string[]>();
    values.forEach((v, r) => {
      const list = byValue.get(v) ?? [];
      list.push(shapes[r] as string);
      byValue.set(v, list);
    });
    let conditional = 0;
    for (const list of byValue.values()) {
      conditional += (list.length / total) * entropy(countBy(list), list.length);
    }
    if (conditional > shapeEntropy / 2) continue;
    if (
      !best ||
      conditional < best.conditional - 1e-9 ||
      (Math.abs(conditional - best.conditional) <= 1e-9 && distinct < best.values)
    ) {
      best = { key, conditional, values: distinct };
    }
  }
  return best?.key ?? null;
}

function countBy(items: string[]): number[] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts.values()];
}

/** Shannon entropy (bits) of a distribution given by counts summing to `total`. */
function entropy(counts: number[], total: number): number {
  let h = 0;
  for (const c of counts) if (c > 0) h -= (c / total) * Math.log2(c / total);
  return h;
}

/**
 * Replaces segment `n` of `entry` by a copy of its rows ordered by `key`'s stored text (missing
 * last; left out `byTime`), `timestamp` and ingest order, carrying each row's ingest order in `seq`. The copy is
 * created with the same columns and column types (so the payload keeps its compression); the
 * view reads the table by name and needs no change.
 */
async function rewriteOrdered(
  conn: DuckDBConnection,
  payloadType: string,
  entry: CollectionEntry,
  n: number,
  key: KeyColumns,
  byTime: boolean,
): Promise<number> {
  const segment = entry.segments[n] as Segment;
  const schema = ENGINE_SCHEMA;
  const name = segmentTableName(entry.id, n);
  const columns = await conn.runAndReadAll(
    `SELECT column_name, data_type, is_nullable FROM duckdb_columns()
     WHERE schema_name = $1 AND table_name = $2 ORDER BY column_index`,
    [schema, name],
  );
  const seq = quoteIdentifier(SEQ_COLUMN);
  const definitions: string[] = [];
  for (const [column, type, nullable] of columns.getRows()) {
    const col = String(column);
    if (col === SEQ_COLUMN) continue;
    const declared = col === 'json' ? payloadType : String(type);
    definitions.push(`${quoteIdentifier(col)} ${declared}${nullable ? '' : ' NOT NULL'}`);
  }
  definitions.push(`${seq} BIGINT`);
  const names = columns
    .getRows()
    .map(([column]) => String(column))
    .filter((c) => c !== SEQ_COLUMN)
    .map(quoteIdentifier);
  const order = ingestOrderSql(segment);
  const staging = `${quoteIdentifier(schema)}.${quoteIdentifier(`${name}_ordering`)}`;
  await conn.run(`CREATE TABLE ${staging} (${definitions.join(', ')})`);
  const inserted = await conn.runAndReadAll(
    `INSERT INTO ${staging} SELECT ${names.join(', ')}, ${order} FROM ${segment.table}
     ORDER BY ${byTime ? '' : `${keyColumn(key, 's')} NULLS LAST, `}"timestamp", ${order}`,
  );
  await conn.run(`DROP TABLE ${segment.table}`);
  await conn.run(`ALTER TABLE ${staging} RENAME TO ${quoteIdentifier(name)}`);
  segment.reordered = true;
  return Number(inserted.getRows()[0]?.[0] ?? 0);
}
