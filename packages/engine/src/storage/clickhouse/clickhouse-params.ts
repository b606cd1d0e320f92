/**
 * Bound parameters of one ClickHouse statement: each value gets a name and its ClickHouse type,
 * and the SQL text holds only the placeholder `{name:Type}`.
 */
export class ClickHouseParams {
  readonly values: Record<string, unknown> = {};
  #next = 0;

  /** The placeholder of `value` as a `type`. */
  add(type: string, value: unknown): string {
    const name = `p${this.#next++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }
}
