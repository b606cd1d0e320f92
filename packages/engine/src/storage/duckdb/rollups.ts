import type { DuckDBConnection } from '@duckdb/node-api';
import { jsonPointer } from '../key-path.ts';
import {
  AUTO_KEY_NAME,
  MAX_KEY_VALUES,
  MAX_ROLLUP_KEYS,
  type RollupSpec,
  SPAN_SECONDS,
} from '../rollup-spec.ts';
import type { RollupUses } from '../rollup-usage.ts';
import { type CollectionEntry, ENGINE_SCHEMA } from './catalog.ts';
import { DOUBLE, LIST, listValue, quotedString } from './duckdb-api.ts';
import { sumPartsSql } from './exact-sum-sql.ts';
import { numericForm, storedStringForm } from './key-typing.ts';
import { readPrepared, runPrepared } from './prepared-statements.ts';
import { quoteIdentifier } from './quote-identifier.ts';
import { DIGITS, sumDigits, sumDigitsSql } from './rollup-sum-digits.ts';
import { SqlParams } from './sql-params.ts';

/**
 * Rollups: each collection's event count per 15-minute span of UTC time, and per value of the
 * keys the workspace declares (their string forms), with the exact sums' parts of the metrics
 * it declares, kept in the same transaction as the events they count, so that a query can read
 * a few rows per span instead of every event (`collection/plan/rollup-eligibility.ts` and
 * `collection/duckdb/line-sql.ts` decide when that gives the same answer). Rows are only ever
 * appended (one per span and key values a batch touches), because DuckDB appends from
 * concurrent transactions never conflict while updates of one row would; readers add a span's
 * rows up, and the writer merges them when it runs alone: at open, at compaction, and whenever
 * {@link MERGE_AFTER_ROWS} rows ({@link KEYED_MERGE_AFTER_ROWS} with keys or sums) have been
 * appended since the last merge, so that a
 * long-running server's rollups stay near one row per span and key values.
 *
 * The table exists exactly while it is complete, and every write keeps it while it exists: it
 * is created and filled from the events in one transaction when a workspace is opened with
 * rollups on (or with other keys than the file's), or when the engine adds keys by itself
 * ({@link extendRollups}), and dropped when it is opened with them off.
 */

export { MAX_KEY_VALUES, SPAN_SECONDS };

/** The rollup table's name in {@link ENGINE_SCHEMA}. */
const ROLLUP_TABLE_NAME = 'rollup_15m';
/** The rollup table, schema-qualified and quoted. */
export const ROLLUP_TABLE = `${quoteIdentifier(ENGINE_SCHEMA)}.${quoteIdentifier(ROLLUP_TABLE_NAME)}`;

/** The keys and metrics the rollups are kept by, in the order of their columns. */
const SPEC_TABLE = `${quoteIdentifier(ENGINE_SCHEMA)}.${quoteIdentifier('rollup_spec')}`;

/** The column of the i-th key's string forms. */
export const keyColumnName = (i: number) => `k${i}`;
/**
 * The prefix of the i-th metric's columns: `_d0` to `_d3` (the grid sum's digits,
 * `rollup-sum-digits.ts`), `_r` (off-grid values), `_n` (count).
 */
export const sumColumnPrefix = (i: number) => `s${i}`;

/** The span of a BIGINT Unix-seconds expression: floor division, negative seconds included. */
export function spanSql(ts: string): string {
  return `((${ts} - (((${ts} % ${SPAN_SECONDS}) + ${SPAN_SECONDS}) % ${SPAN_SECONDS})) // ${SPAN_SECONDS})`;
}

/**
 * Rollup rows appended since the last merge after which the writer merges them: bounds the rows
 * a read adds up beyond one per span, at the cost of one small writer transaction per as many rows.
 */
export const MERGE_AFTER_ROWS = 512;

/**
 * The same for rollups kept by keys or with sums, whose batches append a row per span and key
 * values they touch: they merge after more rows, so that a merge, which runs alone, does not
 * hold up the writers every few batches.
 */
export const KEYED_MERGE_AFTER_ROWS = 4096;

/** A workspace's rollups as its writers and readers see them. */
export class RollupLedger {
  /** Rows appended since the last merge. */
  unmerged = 0;
  /**
   * The keys in column order: `dropped` once readers must no longer read a key (set before the
   * merge that clears it commits), `written` while writers still fill its column (cleared only
   * once that merge is known to have committed, see {@link settleDrops}).
   */
  readonly keys: Array<{ name: string; dropped: boolean; written: boolean }>;
  readonly sums: string[];
  /** Keys a merge cleared whose commit is not known yet. */
  readonly pending = new Set<string>();
  /** Whether the engine adds keys that queries use (`spec.auto`). */
  readonly auto: boolean;
  /** The keys and sums the engine added by itself rather than the workspace declared. */
  readonly added: { keys: Set<string>; sums: Set<string> };
  /**
   * Each collection's events per span that has any, by id, as of the last merge: how long a
   * window must be to read rollups (`collection/plan/rollup-eligibility.ts`).
   */
  readonly eventsPerSpan = new Map<number, number>();
  /**
   * Each collection's rollup rows per event, by id, as of the last merge: whether reading them
   * costs less than reading the events (`collection/plan/rollup-eligibility.ts`).
   */
  readonly rowsPerEvent = new Map<number, number>();
  /**
   * Whether queries weigh the rollup rows against the events (engine option `rollupReads`,
   * `'cheaper'`), rather than read rollups wherever they give the answer (`'always'`).
   */
  weighRows = true;

  constructor(
    spec: RollupSpec,
    dropped: ReadonlySet<string> = new Set(),
    added: { keys?: Iterable<string>; sums?: Iterable<string> } = {},
  ) {
    this.keys = spec.keys.map((name) => ({
      name,
      dropped: dropped.has(name),
      written: !dropped.has(name),
    }));
    this.sums = [...spec.sums];
    this.auto = spec.auto === true;
    this.added = { keys: new Set(added.keys), sums: new Set(added.sums) };
  }

  /** The keys and sums the rows are kept by, in column order. */
  get spec(): RollupSpec {
    const names = { keys: this.keys.map((k) => k.name), sums: [...this.sums] };
    return this.auto ? { ...names, auto: true } : names;
  }

  /**
   * Takes over `next`'s keys and sums once the transaction that rebuilt the rollups for them
   * committed: `next` keeps every column of this ledger where it was, so a statement bound
   * before still reads the right ones.
   */
  adopt(next: RollupLedger): void {
    this.keys.splice(
      0,
      this.keys.length,
      ...next.keys.map((k) => ({ name: k.name, dropped: k.dropped, written: !k.dropped })),
    );
    this.sums.splice(0, this.sums.length, ...next.sums);
    this.added.keys = next.added.keys;
    this.added.sums = next.added.sums;
    this.pending.clear();
    this.unmerged = 0;
    this.eventsPerSpan.clear();
    for (const [id, events] of next.eventsPerSpan) this.eventsPerSpan.set(id, events);
    this.rowsPerEvent.clear();
    for (const [id, rows] of next.rowsPerEvent) this.rowsPerEvent.set(id, rows);
  }

  /** Whether enough rows were appended since the last merge to merge them now. */
  get due(): boolean {
    return this.unmerged >= (this.keyed ? KEYED_MERGE_AFTER_ROWS : MERGE_AFTER_ROWS);
  }

  /** The column of a key's string forms, where it is rolled up. */
  keyColumn(name: string): string | null {
    const i = this.keys.findIndex((k) => k.name === name && !k.dropped);
    return i < 0 ? null : quoteIdentifier(keyColumnName(i));
  }

  /** The prefix of a metric's columns, where it is rolled up. */
  sumColumns(name: string): string | null {
    const i = this.sums.indexOf(name);
    return i < 0 ? null : sumColumnPrefix(i);
  }

  /** Whether the rows hold more than the count per span. */
  get keyed(): boolean {
    return this.keys.length > 0 || this.sums.length > 0;
  }
}

/**
 * The string form of top-level key `name` in the payload column `json`, as a field reads it;
 * `text` writes the key's JSON pointer (a parameter, or a literal where DuckDB takes none).
 */
function stringFormSql(json: string, name: string, text: (value: string) => string): string {
  const p = text(jsonPointer([name]));
  return storedStringForm(`json_extract_string(${json}, ${p})`, json, p, true);
}

/** Whether the workspace's file has complete rollups. */
async function hasTable(conn: DuckDBConnection, table: string): Promise<boolean> {
  const reader = await conn.runAndReadAll(
    `SELECT count(*) FROM duckdb_tables()
     WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2`,
    [ENGINE_SCHEMA, table],
  );
  return Number(reader.getRows()[0]?.[0] ?? 0) > 0;
}

/**
 * Whether the file's rollups keep their sums in the form before `rollup-sum-digits.ts` (the
 * limbs' sums as HUGEINT columns): such a table is rebuilt from the events when opened.
 */
async function hasOldSums(conn: DuckDBConnection): Promise<boolean> {
  const reader = await conn.runAndReadAll(
    `SELECT count(*) FROM duckdb_columns()
     WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2 AND data_type = 'HUGEINT'`,
    [ENGINE_SCHEMA, ROLLUP_TABLE_NAME],
  );
  return Number(reader.getRows()[0]?.[0] ?? 0) > 0;
}

/**
 * The spec the file's rollups were built with, the keys that stopped being rolled up, and the
 * keys and sums the engine added by itself (a file from before automatic keys has none).
 */
async function fileSpec(conn: DuckDBConnection): Promise<{
  spec: RollupSpec;
  dropped: Set<string>;
  added: { keys: Set<string>; sums: Set<string> };
  /** Whether the spec table says which the engine added (files from before do not). */
  labelled: boolean;
}> {
  const spec = { keys: [] as string[], sums: [] as string[] };
  const dropped = new Set<string>();
  const added = { keys: new Set<string>(), sums: new Set<string>() };
  if (!(await hasTable(conn, 'rollup_spec'))) return { spec, dropped, added, labelled: false };
  const columns = await conn.runAndReadAll(
    `SELECT count(*) FROM duckdb_columns()
     WHERE database_name = current_database() AND schema_name = $1 AND table_name = 'rollup_spec' AND column_name = 'auto'`,
    [ENGINE_SCHEMA],
  );
  const labelled = Number(columns.getRows()[0]?.[0] ?? 0) > 0;
  const auto = labelled ? 'auto' : 'false';
  const reader = await conn.runAndReadAll(
    `SELECT role, name, dropped, ${auto} FROM ${SPEC_TABLE} ORDER BY role, position`,
  );
  for (const [role, name, gone, byEngine] of reader.getRows()) {
    const names = role === 'key' ? spec.keys : spec.sums;
    names.push(String(name));
    if (gone === true) dropped.add(String(name));
    if (byEngine === true) (role === 'key' ? added.keys : added.sums).add(String(name));
  }
  return { spec, dropped, added, labelled };
}

/**
 * What a workspace opened with `setting` keeps, given the file's spec: the declared keys and
 * sums, and with `auto` also those the engine added before (keys still rolled up, within
 * {@link MAX_ROLLUP_KEYS}), in the file's order so that an unchanged setting rebuilds nothing;
 * `true` and unset keep the file's own.
 */
function wantedSpec(
  setting: true | RollupSpec | undefined,
  file: Awaited<ReturnType<typeof fileSpec>>,
): { spec: RollupSpec; added: { keys: string[]; sums: string[] } } {
  if (typeof setting !== 'object') {
    return { spec: file.spec, added: { keys: [...file.added.keys], sums: [...file.added.sums] } };
  }
  if (!setting.auto) {
    return {
      spec: { keys: [...setting.keys], sums: [...setting.sums] },
      added: { keys: [], sums: [] },
    };
  }
  const merge = (declared: readonly string[], kept: readonly string[], added: Set<string>) => {
    const auto = kept.filter(
      (name) => !declared.includes(name) && added.has(name) && !file.dropped.has(name),
    );
    const room = auto.slice(0, Math.max(0, MAX_ROLLUP_KEYS - declared.length));
    const names = kept.filter((name) => declared.includes(name) || room.includes(name));
    return { names: [...names, ...declared.filter((name) => !names.includes(name))], auto: room };
  };
  const keys = merge(setting.keys, file.spec.keys, file.added.keys);
  const sums = merge(setting.sums, file.spec.sums, file.added.sums);
  return {
    spec: { keys: keys.names, sums: sums.names, auto: true },
    added: { keys: keys.auto, sums: sums.auto },
  };
}

const sameSpec = (a: RollupSpec, b: RollupSpec) =>
  JSON.stringify([a.keys, a.sums]) === JSON.stringify([b.keys, b.sums]);

/**
 * Brings the file in line with the workspace's setting, on the writer `conn` before any other
 * use, and answers the rollups it keeps: with a spec, creates and fills them when missing or
 * kept by other keys or in an older form ({@link hasOldSums}), and merges their rows (one
 * transaction, so that a crash leaves the file's rollups as they were, to be rebuilt at the next
 * open); `true`, the same with the file's own spec (none: counts only); `false`, drops them, so
 * that turning them on again rebuilds them whole; unset (tools that are not the workspace's
 * server), keeps what the file has, rebuilt where in an older form.
 */
export async function openRollups(
  conn: DuckDBConnection,
  setting: boolean | RollupSpec | undefined,
  collections: readonly CollectionEntry[],
): Promise<RollupLedger | undefined> {
  const present = await hasTable(conn, 'rollup_15m');
  const file = await fileSpec(conn);
  if (setting === undefined && !present) return undefined;
  if (setting === false) {
    if (present) await conn.run(`DROP TABLE ${ROLLUP_TABLE}`);
    await conn.run(`DROP TABLE IF EXISTS ${SPEC_TABLE}`);
    return undefined;
  }
  const wanted = wantedSpec(setting, file);
  const rebuild = !present || !sameSpec(wanted.spec, file.spec) || (await hasOldSums(conn));
  const ledger = new RollupLedger(wanted.spec, rebuild ? new Set() : file.dropped, wanted.added);
  const sorted = (added: RollupLedger['added']) => ({
    keys: [...added.keys].sort(),
    sums: [...added.sums].sort(),
  });
  const relabel =
    present &&
    (!sameSpec(sorted(ledger.added), sorted(file.added)) || (ledger.auto && !file.labelled));
  for (const entry of collections) entry.rollup = ledger;
  await conn.run('BEGIN TRANSACTION');
  try {
    if (rebuild) await buildRollups(conn, ledger, collections, present);
    else if (relabel) await writeSpecTable(conn, ledger);
    await mergeRows(conn, ledger);
    await conn.run('COMMIT');
  } catch (error) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return ledger;
}

/**
 * Records `ledger`'s keys and sums (which stopped, which the engine added) as the file's spec,
 * inside the caller's transaction.
 */
async function writeSpecTable(conn: DuckDBConnection, ledger: RollupLedger): Promise<void> {
  await conn.run(`DROP TABLE IF EXISTS ${SPEC_TABLE}`);
  await conn.run(
    `CREATE TABLE ${SPEC_TABLE} (role VARCHAR NOT NULL, position INTEGER NOT NULL, name VARCHAR NOT NULL, dropped BOOLEAN NOT NULL, auto BOOLEAN NOT NULL)`,
  );
  const rows = [
    ...ledger.keys.map((k, i) => ['key', i, k.name, k.dropped, ledger.added.keys.has(k.name)]),
    ...ledger.sums.map((name, i) => ['sum', i, name, false, ledger.added.sums.has(name)]),
  ] as const;
  for (const row of rows) {
    await conn.run(`INSERT INTO ${SPEC_TABLE} VALUES ($1, $2, $3, $4, $5)`, [...row]);
  }
}

/**
 * Creates the rollups for `ledger`'s keys and sums and fills them from every collection's events,
 * inside the caller's transaction, replacing any the file has (`present`).
 */
async function buildRollups(
  conn: DuckDBConnection,
  ledger: RollupLedger,
  collections: readonly CollectionEntry[],
  present: boolean,
): Promise<void> {
  if (present) await conn.run(`DROP TABLE ${ROLLUP_TABLE}`);
  await writeSpecTable(conn, ledger);
  await conn.run(`CREATE TABLE ${ROLLUP_TABLE} (${tableColumns(ledger).join(', ')})`);
  for (const entry of collections) {
    for (const segment of entry.segments) {
      await addRollupRows(conn, ledger, entry.id, segment.table);
    }
  }
}

/**
 * The distinct string forms top-level key `name` has across every collection's events, as the
 * rollups would count them, read on the caller's (reader) connection: whether a key the engine
 * would add stays within {@link MAX_KEY_VALUES}.
 */
export async function keyValueCount(
  conn: DuckDBConnection,
  collections: readonly CollectionEntry[],
  name: string,
): Promise<number> {
  const params = new SqlParams();
  const forms = collections.flatMap((entry) =>
    entry.segments.map(
      (s) => `SELECT ${stringFormSql('"json"', name, (v) => params.text(v))} AS k FROM ${s.table}`,
    ),
  );
  if (forms.length === 0) return 0;
  const rows = await readPrepared(
    conn,
    `SELECT count(DISTINCT k) FROM (${forms.join(' UNION ALL ')})`,
    params,
  );
  return Number(rows[0]?.[0] ?? 0);
}

/**
 * Rebuilds the rollups with `add`'s keys and sums after the ones `ledger` has, inside the
 * caller's writer transaction, and answers the ledger to {@link RollupLedger.adopt} once it
 * commits. Every column keeps its place (a key that stopped keeps its column), so statements
 * bound to the ledger before still read what they meant.
 */
export async function extendRollups(
  conn: DuckDBConnection,
  ledger: RollupLedger,
  collections: readonly CollectionEntry[],
  add: RollupUses,
): Promise<RollupLedger> {
  for (const name of [...add.keys, ...add.sums]) {
    if (!AUTO_KEY_NAME.test(name)) throw new RangeError('not a name the engine adds by itself');
  }
  await settleDrops(conn, ledger);
  const { keys, sums } = ledger.spec;
  // A key that stopped stays stopped (its column empty) rather than being grouped by again.
  const stopped = new Set(ledger.keys.filter((k) => k.dropped).map((k) => k.name));
  const next = new RollupLedger(
    { keys: [...keys, ...add.keys], sums: [...sums, ...add.sums], auto: ledger.auto },
    stopped,
    { keys: [...ledger.added.keys, ...add.keys], sums: [...ledger.added.sums, ...add.sums] },
  );
  await buildRollups(conn, next, collections, true);
  await mergeRows(conn, next);
  return next;
}

/** The rollup table's columns with their types. */
function tableColumns(ledger: RollupLedger): string[] {
  const columns = ['collection_id INTEGER NOT NULL', 'span BIGINT NOT NULL'];
  ledger.keys.forEach((_, i) => {
    columns.push(`${quoteIdentifier(keyColumnName(i))} VARCHAR`);
  });
  columns.push('n BIGINT NOT NULL');
  ledger.sums.forEach((_, i) => {
    const p = sumColumnPrefix(i);
    for (const digit of DIGITS) columns.push(`${p}_${digit} BIGINT`);
    columns.push(`${p}_r DOUBLE[]`, `${p}_n BIGINT`);
  });
  return columns;
}

/** The key columns' names, quoted, in order. */
const keyColumns = (ledger: RollupLedger) =>
  ledger.keys.map((_, i) => quoteIdentifier(keyColumnName(i)));

/**
 * Brings the writers' view of keys a merge cleared in line with the file, at the start of a
 * writer transaction: a key whose clearing committed is no longer written; one whose merge
 * rolled back is written and read again, as the file still keeps it.
 */
export async function settleDrops(conn: DuckDBConnection, ledger: RollupLedger): Promise<void> {
  if (ledger.pending.size === 0) return;
  const reader = await conn.runAndReadAll(
    `SELECT name FROM ${SPEC_TABLE} WHERE role = 'key' AND dropped`,
  );
  const dropped = new Set(reader.getRows().map(([name]) => String(name)));
  for (const key of ledger.keys) {
    if (!ledger.pending.has(key.name)) continue;
    key.written = !dropped.has(key.name);
    key.dropped = dropped.has(key.name);
  }
  ledger.pending.clear();
}

/**
 * Adds the events of `relation` (a table with BIGINT `timestamp` and the payload `json`) to
 * the rollups of `ledger` as collection `collectionId`'s, inside the caller's transaction.
 */
async function addRollupRows(
  conn: DuckDBConnection,
  ledger: RollupLedger,
  collectionId: number,
  relation: string,
): Promise<void> {
  await settleDrops(conn, ledger);
  const params = new SqlParams();
  const keys = ledger.keys.map((k) =>
    k.written ? stringFormSql('"json"', k.name, (v) => params.text(v)) : 'NULL::VARCHAR',
  );
  // The parts of `exact-sum-sql.ts`, as the raw statements add them, their limbs kept as digits.
  const sums = ledger.sums.map((name, i) => {
    const parts = sumPartsSql(numericForm(stringFormSql('"json"', name, (v) => params.text(v))));
    const digits = sumDigitsSql({ high: `p${i}.h`, middle: `p${i}.m`, low: `p${i}.l` });
    return { inner: `${parts} AS p${i}`, outer: `${digits.join(', ')}, p${i}.r, p${i}.n` };
  });
  const groups = ['span', ...keys.map((_, i) => `g${i}`)];
  const keyed = keys.map((k, i) => `${k} AS g${i}`);
  const result = await runPrepared(
    conn,
    `INSERT INTO ${ROLLUP_TABLE}
     SELECT ${params.integer(collectionId)}, ${groups.join(', ')}, n${sums.map((s) => `, ${s.outer}`).join('')} FROM (
       SELECT ${groups.join(', ')}, count(*) AS n${sums.map((s) => `, ${s.inner}`).join('')}
       FROM (SELECT ${spanSql('"timestamp"')} AS span, ${['"json"', ...keyed].join(', ')} FROM ${relation})
       GROUP BY ${groups.join(', ')}
     )`,
    params,
  );
  ledger.unmerged += Number(result.rowsChanged);
}

/**
 * What the rollups need of events with columns `timestamp` and `json`, as an INSERT's RETURNING
 * list or a SELECT's (their timestamps, then each key's string form and each metric's numeric
 * form). DuckDB takes no parameter in a RETURNING list: the keys' pointers are string literals,
 * quoted by DuckDB's client, of names the server's own configuration declared (`rollup-spec.ts`)
 * or plain names the engine added by itself (`AUTO_KEY_NAME`: letters, digits, `_` and `-`).
 */
export function returningSql(entry: CollectionEntry): string {
  const ledger = entry.rollup;
  const columns = ['"timestamp"'];
  if (!ledger) return columns[0] as string;
  for (const k of ledger.keys) {
    columns.push(k.written ? stringFormSql('"json"', k.name, quotedString) : 'NULL::VARCHAR');
  }
  for (const name of ledger.sums) {
    columns.push(numericForm(stringFormSql('"json"', name, quotedString)));
  }
  return columns.join(', ');
}

const GRID_SCALE = 2 ** 90;
const GRID_LIMIT = 2 ** 96;

/** One rollup row being added up: its count and, per metric, the exact sum's parts. */
interface RowSums {
  span: number;
  keys: Array<string | null>;
  n: number;
  sums: Array<{ grid: bigint; rest: number[]; count: number }>;
}

/**
 * The rollup rows of a batch being added up, one per span and key values, from rows as
 * {@link returningSql} reads them (their timestamp, each key's string form, each metric's
 * numeric form; only the timestamp when the rollups keep counts alone). A metric's value on the
 * fixed-point grid of `collection/plan/exact-sum.ts` adds to the row's grid integer, any other
 * to its list, so the parts re-add to the exact sum whichever limbs carry it.
 */
export class SpanRows {
  readonly #keyCount: number;
  readonly #sumCount: number;
  /** Span, then each key's value in turn, down to the row: no text built per event. */
  readonly #tree = new Map<unknown, unknown>();
  readonly rows: RowSums[] = [];

  constructor(ledger: RollupLedger) {
    this.#keyCount = ledger.keys.length;
    this.#sumCount = ledger.sums.length;
  }

  /** Adds one event's row; the row may be reused by the caller afterwards. */
  add(row: readonly unknown[]): void {
    const keyCount = this.#keyCount;
    const span = Math.floor(Number(row[0]) / SPAN_SECONDS);
    let level = this.#tree;
    let at: unknown = span;
    for (let k = 0; k < keyCount; k++) {
      let next = level.get(at) as Map<unknown, unknown> | undefined;
      if (!next) {
        next = new Map();
        level.set(at, next);
      }
      level = next;
      const v = row[1 + k];
      at = v === null || v === undefined ? null : String(v);
    }
    let group = level.get(at) as RowSums | undefined;
    if (!group) {
      group = {
        span,
        keys: row
          .slice(1, 1 + keyCount)
          .map((v) => (v === null || v === undefined ? null : String(v))),
        n: 0,
        sums: Array.from({ length: this.#sumCount }, () => ({ grid: 0n, rest: [], count: 0 })),
      };
      level.set(at, group);
      this.rows.push(group);
    }
    group.n += 1;
    for (let i = 0; i < this.#sumCount; i++) {
      const x = row[1 + keyCount + i];
      if (x === null || x === undefined) continue;
      const value = Number(x);
      const sum = group.sums[i] as RowSums['sums'][number];
      sum.count += 1;
      const scaled = Math.abs(value) * GRID_SCALE;
      if (Math.abs(value) < GRID_LIMIT && Number.isInteger(scaled)) {
        sum.grid += value < 0 ? -BigInt(scaled) : BigInt(scaled);
      } else sum.rest.push(value);
    }
  }
}

/**
 * Appends the rows of `spans` (the rows just inserted, added up) to `entry`'s rollups, inside
 * the caller's transaction: added up in JavaScript rather than by reading the inserted relation
 * again, which a batch's text would have to be split anew for.
 */
export async function addSpanRows(
  conn: DuckDBConnection,
  entry: CollectionEntry,
  spans: SpanRows,
): Promise<void> {
  const ledger = entry.rollup;
  if (!ledger) return;
  const all = spans.rows;
  if (all.length === 0) return;
  // Through an appender, inside the caller's transaction: a batch's few rows need no statement
  // bound, planned and run on the thread pool beside its events' insert.
  const appender = await conn.createAppender(ROLLUP_TABLE_NAME, ENGINE_SCHEMA);
  try {
    for (const group of all) {
      appender.appendInteger(entry.id);
      appender.appendBigInt(BigInt(group.span));
      for (const key of group.keys) {
        if (key === null) appender.appendNull();
        else appender.appendVarchar(key);
      }
      appender.appendBigInt(BigInt(group.n));
      for (const sum of group.sums) {
        for (const digit of sumDigits(sum.grid)) appender.appendBigInt(digit);
        if (sum.rest.length) appender.appendList(listValue(sum.rest), LIST(DOUBLE));
        else appender.appendNull();
        appender.appendBigInt(BigInt(sum.count));
      }
      appender.endRow();
    }
    appender.flushSync();
  } catch (error) {
    appender.clear();
    throw error;
  } finally {
    appender.closeSync();
  }
  // Counted before the commit: a rolled-back batch only brings the next merge forward.
  ledger.unmerged += all.length;
}

/**
 * Rewrites the rollups of every span that has more than one row per key values as one row per
 * key values, inside the caller's transaction: one scan of the (small) table, and rows deleted
 * and written only for the spans appended to since the last merge. A key past
 * {@link MAX_KEY_VALUES} string forms first stops being rolled up (`ledger`'s keys say so before
 * the commit, so no reader takes its cleared column for missing values).
 */
async function mergeRows(conn: DuckDBConnection, ledger: RollupLedger): Promise<void> {
  await settleDrops(conn, ledger);
  const keys = keyColumns(ledger);
  if (keys.length) {
    const counts = await conn.runAndReadAll(
      `SELECT ${keys.map((k) => `count(DISTINCT ${k})`).join(', ')} FROM ${ROLLUP_TABLE}`,
    );
    const distinct = (counts.getRows()[0] ?? []).map(Number);
    const over = ledger.keys.filter((k, i) => !k.dropped && (distinct[i] ?? 0) > MAX_KEY_VALUES);
    for (const key of over) {
      const i = ledger.keys.indexOf(key);
      key.dropped = true;
      ledger.pending.add(key.name);
      await conn.run(`UPDATE ${SPEC_TABLE} SET dropped = true WHERE role = 'key' AND name = $1`, [
        key.name,
      ]);
      await conn.run(`UPDATE ${ROLLUP_TABLE} SET ${keys[i]} = NULL`);
    }
  }
  // Each metric's digits added up (as `a0` to `a3`), then carried into digits again.
  const sums = ledger.sums.map((_, i) => {
    const p = sumColumnPrefix(i);
    const added = DIGITS.map((d, j) => `sum(${p}_${d})::HUGEINT AS ${p}_a${j}`);
    const rest = [
      `flatten(list(${p}_r) FILTER (WHERE ${p}_r IS NOT NULL)) AS ${p}_r`,
      `sum(${p}_n)::BIGINT AS ${p}_n`,
    ];
    const digits = sumDigitsSql({
      top: `${p}_a3`,
      high: `${p}_a2`,
      middle: `${p}_a1`,
      low: `${p}_a0`,
    });
    const named = digits.map((d, j) => `${d} AS ${p}_${DIGITS[j]}`);
    return { inner: [...added, ...rest], outer: [...named, `${p}_r`, `${p}_n`] };
  });
  const groups = ['collection_id', 'span', ...keys];
  const distinct = keys.length ? `count(DISTINCT [${keys.join(', ')}])` : '1';
  await conn.run(
    `CREATE TEMP TABLE rollup_merged AS
     SELECT ${[...groups, 'n', ...sums.flatMap((s) => s.outer)].join(', ')} FROM (
       SELECT ${[...groups, 'sum(n)::BIGINT AS n', ...sums.flatMap((s) => s.inner)].join(', ')}
       FROM ${ROLLUP_TABLE} SEMI JOIN (
         SELECT collection_id, span FROM ${ROLLUP_TABLE}
         GROUP BY collection_id, span HAVING count(*) > ${distinct}
       ) USING (collection_id, span)
       GROUP BY ${groups.join(', ')}
     )`,
  );
  await conn.run(
    `DELETE FROM ${ROLLUP_TABLE} AS r USING (SELECT DISTINCT collection_id, span FROM rollup_merged) AS m
     WHERE r.collection_id = m.collection_id AND r.span = m.span`,
  );
  await conn.run(
    `INSERT INTO ${ROLLUP_TABLE} SELECT * FROM rollup_merged ORDER BY collection_id, span`,
  );
  await conn.run('DROP TABLE rollup_merged');
  const density = await conn.runAndReadAll(
    `SELECT collection_id, sum(n) / count(DISTINCT span), count(*) / sum(n) FROM ${ROLLUP_TABLE} GROUP BY collection_id`,
  );
  ledger.eventsPerSpan.clear();
  ledger.rowsPerEvent.clear();
  for (const [id, events, rows] of density.getRows()) {
    ledger.eventsPerSpan.set(Number(id), Number(events));
    ledger.rowsPerEvent.set(Number(id), Number(rows));
  }
}

/**
 * Merges the rollups' rows (one per collection, span and key values) inside a writer
 * transaction that runs alone (compaction, or the workspace's periodic merge), when the
 * workspace keeps them.
 */
export async function coalesceRollups(
  conn: DuckDBConnection,
  ledger: RollupLedger | undefined,
): Promise<void> {
  if (!ledger) return;
  await mergeRows(conn, ledger);
  ledger.unmerged = 0;
}
