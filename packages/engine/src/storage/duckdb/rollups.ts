import type { DuckDBConnection } from '@duckdb/node-api';
import { type CollectionEntry, ENGINE_SCHEMA } from './catalog.ts';
import { runPrepared } from './prepared-statements.ts';
import { quoteIdentifier } from './quote-identifier.ts';
import { SqlParams } from './sql-params.ts';

/**
 * Rollups: each collection's event count per 15-minute span of UTC time, kept in the same
 * transaction as the events they count, so that a query can read a few rows per span instead
 * of every event (`collection/plan/rollup-eligibility.ts` decides when that gives the same
 * answer). Rows are only ever appended (one per span a batch touches), because DuckDB appends
 * from concurrent transactions never conflict while updates of one row would; readers add a
 * span's rows up, and the writer merges them when it runs alone: at open, at compaction, and
 * whenever {@link MERGE_AFTER_ROWS} rows have been appended since the last merge, so that a
 * long-running server's rollups stay near one row per span.
 *
 * The table exists exactly while it is complete, and every write keeps it while it exists: it
 * is created and filled from the events in one transaction when a workspace is opened with
 * rollups on, and dropped when it is opened with them off.
 */

/**
 * Seconds in one span of UTC time: every zone offset in use since 1972, and every instant one
 * changes, is a multiple of it, so each zone's Hour, Day, Week and Month is a union of spans.
 */
export const SPAN_SECONDS = 900;

/** The rollup table, schema-qualified and quoted. */
export const ROLLUP_TABLE = `${quoteIdentifier(ENGINE_SCHEMA)}.${quoteIdentifier('rollup_15m')}`;

/** The span of a BIGINT Unix-seconds expression: floor division, negative seconds included. */
export function spanSql(ts: string): string {
  return `((${ts} - (((${ts} % ${SPAN_SECONDS}) + ${SPAN_SECONDS}) % ${SPAN_SECONDS})) // ${SPAN_SECONDS})`;
}

/**
 * Rollup rows appended since the last merge after which the writer merges them: bounds the rows
 * a read adds up beyond one per span, at the cost of one small writer transaction per as many rows.
 */
export const MERGE_AFTER_ROWS = 512;

/** A workspace's rollups as its writers see them: the rows appended since their last merge. */
export class RollupLedger {
  unmerged = 0;

  /** Whether enough rows were appended since the last merge to merge them now. */
  get due(): boolean {
    return this.unmerged >= MERGE_AFTER_ROWS;
  }
}

/** Whether the workspace's file has complete rollups. */
async function hasRollups(conn: DuckDBConnection): Promise<boolean> {
  const reader = await conn.runAndReadAll(
    `SELECT count(*) FROM duckdb_tables()
     WHERE database_name = current_database() AND schema_name = $1 AND table_name = 'rollup_15m'`,
    [ENGINE_SCHEMA],
  );
  return Number(reader.getRows()[0]?.[0] ?? 0) > 0;
}

/**
 * Brings the file in line with the workspace's setting, on the writer `conn` before any other
 * use, and says whether it keeps rollups: with them on, creates and fills them when missing and
 * merges their rows (one transaction); with them off, drops them, so that turning them on again
 * rebuilds them whole; unset (tools that are not the workspace's server), keeps what the file has.
 */
export async function openRollups(
  conn: DuckDBConnection,
  enabled: boolean | undefined,
  collections: readonly CollectionEntry[],
): Promise<boolean> {
  const present = await hasRollups(conn);
  if (enabled === undefined) return present;
  if (!enabled) {
    if (present) await conn.run(`DROP TABLE ${ROLLUP_TABLE}`);
    return false;
  }
  await conn.run('BEGIN TRANSACTION');
  try {
    if (!present) {
      await conn.run(
        `CREATE TABLE ${ROLLUP_TABLE} (collection_id INTEGER NOT NULL, span BIGINT NOT NULL, n BIGINT NOT NULL)`,
      );
      for (const entry of collections) {
        for (const segment of entry.segments) await addRollupRows(conn, entry, segment.table);
      }
    }
    await mergeRows(conn);
    await conn.run('COMMIT');
  } catch (error) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return true;
}

/**
 * Adds the counts of the events of `relation` (a table with a BIGINT `timestamp` column) to
 * `entry`'s rollups, inside the caller's transaction.
 */
export async function addRollupRows(
  conn: DuckDBConnection,
  entry: CollectionEntry,
  relation: string,
): Promise<void> {
  const params = new SqlParams();
  const result = await runPrepared(
    conn,
    `INSERT INTO ${ROLLUP_TABLE}
     SELECT ${params.integer(entry.id)}, ${spanSql('"timestamp"')} AS span, count(*) FROM ${relation} GROUP BY span`,
    params,
  );
  if (entry.rollup) entry.rollup.unmerged += Number(result.rowsChanged);
}

/** Span rows written per statement, at most. */
const ROWS_PER_INSERT = 1000;

/**
 * Adds the counts of events just inserted (their `timestamps`, as the caller holds them or an
 * INSERT's RETURNING gives them) to `entry`'s rollups, inside the caller's transaction: counted
 * here rather than by reading the inserted relation again, which a batch's text would have to
 * be split anew for.
 */
export async function addSpanCounts(
  conn: DuckDBConnection,
  entry: CollectionEntry,
  timestamps: readonly number[],
): Promise<void> {
  const counts = new Map<number, number>();
  for (const ts of timestamps) {
    const span = Math.floor(ts / SPAN_SECONDS);
    counts.set(span, (counts.get(span) ?? 0) + 1);
  }
  const spans = [...counts];
  for (let i = 0; i < spans.length; i += ROWS_PER_INSERT) {
    const params = new SqlParams();
    const id = params.integer(entry.id);
    const tuples = spans
      .slice(i, i + ROWS_PER_INSERT)
      .map(([span, n]) => `(${id}, ${params.integer(span)}, ${params.integer(n)})`);
    await runPrepared(conn, `INSERT INTO ${ROLLUP_TABLE} VALUES ${tuples.join(', ')}`, params);
  }
  // Counted before the commit: a rolled-back batch only brings the next merge forward.
  if (entry.rollup) entry.rollup.unmerged += spans.length;
}

/**
 * Rewrites the rollups of every span that has more than one row as one row, inside the caller's
 * transaction: one scan of the (small) table, and rows deleted and written only for the spans
 * appended to since the last merge.
 */
async function mergeRows(conn: DuckDBConnection): Promise<void> {
  await conn.run(
    `CREATE TEMP TABLE rollup_merged AS
     SELECT collection_id, span, sum(n)::BIGINT AS n FROM ${ROLLUP_TABLE}
     GROUP BY ALL HAVING count(*) > 1`,
  );
  await conn.run(
    `DELETE FROM ${ROLLUP_TABLE} AS r USING rollup_merged AS m
     WHERE r.collection_id = m.collection_id AND r.span = m.span`,
  );
  await conn.run(`INSERT INTO ${ROLLUP_TABLE} SELECT * FROM rollup_merged ORDER BY ALL`);
  await conn.run('DROP TABLE rollup_merged');
}

/**
 * Merges the rollups' rows (one per collection and span) inside a writer transaction that runs
 * alone (compaction, or the workspace's periodic merge), when the workspace keeps them.
 */
export async function coalesceRollups(
  conn: DuckDBConnection,
  ledger: RollupLedger | undefined,
): Promise<void> {
  if (!ledger) return;
  await mergeRows(conn);
  ledger.unmerged = 0;
}
