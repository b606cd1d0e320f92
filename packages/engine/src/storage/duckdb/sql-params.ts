import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { BIGINT, BOOLEAN, DOUBLE, LIST, listValue, VARCHAR } from './duckdb-api.ts';

/**
 * Bound parameters of one statement. Every value that comes from a request, an event or a
 * computation goes through here and appears in SQL text only as `$n`, with an explicit type so
 * DuckDB never has to guess.
 */
export class SqlParams {
  readonly values: DuckDBValue[] = [];
  readonly types: DuckDBType[] = [];

  #add(value: DuckDBValue, type: DuckDBType): string {
    this.values.push(value);
    this.types.push(type);
    return `$${this.values.length}`;
  }

  /** A VARCHAR parameter. */
  text(value: string): string {
    return this.#add(value, VARCHAR);
  }

  /** A BIGINT parameter; `value` must be a safe integer. */
  integer(value: number): string {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not a safe integer: ${value}`);
    return this.#add(value, BIGINT);
  }

  /** A DOUBLE parameter. */
  number(value: number): string {
    return this.#add(value, DOUBLE);
  }

  /** A BOOLEAN parameter. */
  boolean(value: boolean): string {
    return this.#add(value, BOOLEAN);
  }

  /** A parameter of the given type. */
  value(value: DuckDBValue, type: DuckDBType): string {
    return this.#add(value, type);
  }

  /** A VARCHAR[] parameter. */
  texts(values: readonly string[]): string {
    return this.#add(listValue([...values]), LIST(VARCHAR));
  }
}

/**
 * Named parameters of one collection-mode statement, written `$name` in its SQL: bind names the
 * values of fields and filters once and each renderer adds its own, so no stage needs to know
 * the positions the others used. Run binds the names a statement holds and leaves out the rest.
 */
export type NamedParams = Record<string, { value: DuckDBValue; type: DuckDBType }>;

/** A statement as a renderer writes it and the run stage takes it. */
export interface Statement {
  sql: string;
  params: NamedParams;
}
