import { type KeyColumnLookup, NO_KEY_COLUMNS } from './clickhouse-key-columns.ts';

/**
 * Bound parameters of one ClickHouse statement: each value gets a name and its ClickHouse type,
 * and the SQL text holds only the placeholder `{name:Type}`. It carries the key columns the
 * statement may read instead of extracting from the JSON.
 */
export class ClickHouseParams {
  readonly values: Record<string, unknown> = {};
  readonly columns: KeyColumnLookup;
  #next = 0;

  constructor(columns: KeyColumnLookup = NO_KEY_COLUMNS) {
    this.columns = columns;
  }

  /** The placeholder of `value` as a `type`. */
  add(type: string, value: unknown): string {
    const name = `p${this.#next++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }

  /** A copy that names its own additions after these, for one statement to start from shared SQL. */
  copy(): ClickHouseParams {
    const out = new ClickHouseParams(this.columns);
    Object.assign(out.values, this.values);
    out.#next = this.#next;
    return out;
  }
}
