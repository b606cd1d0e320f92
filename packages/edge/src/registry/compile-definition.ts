import {
  checkSqlParameterValue,
  describeZodError,
  findSqlPlaceholders,
  type GraphType,
  isSqlQuery,
  type ParamValue,
  parseQueryRequest,
  type SqlParameterType,
} from '@analytics-chart/protocol';
import {
  type ParamSpec,
  type QueryDefinition,
  queryDefinitionSchema,
  type SignerParam,
} from './query-definition.ts';
import { collectPlaceholders, placeholderName, substituteParams } from './substitute-params.ts';

/** A definition checked once and ready to resolve: what the data and sign routes work from. */
export interface CompiledDefinition {
  /** The registry name, or undefined for an inline definition carried in an id. */
  name: string | undefined;
  definition: QueryDefinition;
  graph: GraphType;
  sql: boolean;
  params: Readonly<Record<string, ParamSpec>>;
  /** The parameters the SQL text uses as `{name:Type}`, with their types (SQL mode only). */
  sqlParams: ReadonlyMap<string, SqlParameterType>;
  rangeKeys: readonly string[];
  defaultRange: string | undefined;
  /** Identifies how results are trimmed for this definition (title, fields, names). */
  trimKey: string;
}

/** Thrown for a definition that cannot run; the message names the definition. */
export class DefinitionError extends Error {
  override name = 'DefinitionError';
}

/** Values that fit each SQL parameter type, for the trial run. */
const SQL_SAMPLES: Record<SqlParameterType, ParamValue> = {
  String: 'sample',
  Int64: 1,
  UInt32: 1,
  Float64: 1,
  Date: '2024-01-01',
  DateTime: 0,
};

/** A value that satisfies a parameter, for the trial run. */
function sampleValue(spec: ParamSpec, sqlType: SqlParameterType | undefined): ParamValue {
  if (spec.from === 'session') return sqlType ? SQL_SAMPLES[sqlType] : 'sample';
  if (spec.default !== undefined) return spec.default;
  if (spec.enum?.[0] !== undefined) return spec.enum[0];
  if (spec.type === 'number') return 1;
  if (spec.type === 'boolean') return true;
  if (sqlType === 'Date' || sqlType === 'DateTime') return SQL_SAMPLES[sqlType];
  return 'sample';
}

/** Why a value does not fit the SQL parameter it fills, or null (also null for non-SQL ones). */
export function checkSqlParamValue(
  compiled: CompiledDefinition,
  name: string,
  value: unknown,
): string | null {
  const type = compiled.sqlParams.get(name);
  if (type === undefined) return null;
  const checked = checkSqlParameterValue(type, value);
  if (!checked.ok) return checked.error;
  return portableProblem(type, checked.value);
}

/** The DateTime range (Unix seconds) every backend holds exactly: ClickHouse's DateTime. */
const DATETIME_MAX = 0xffff_ffff;

/**
 * Why a well-typed value would not run the same on every backend, or null. An id lives for
 * months and its edge may change backends: a value one of them cannot carry exactly (a
 * backslash or NUL through a literal-only API, an instant ClickHouse's DateTime would clamp or
 * the database cannot hold) is refused when the id is minted, never discovered as a 502 on
 * every view.
 */
function portableProblem(type: SqlParameterType, value: unknown): string | null {
  if (
    type === 'String' &&
    typeof value === 'string' &&
    (value.includes('\\') || value.includes('\u0000'))
  ) {
    return 'holds a backslash or NUL, which not every backend can carry exactly';
  }
  if (type === 'DateTime' && typeof value === 'number' && (value < 0 || value > DATETIME_MAX)) {
    return 'is outside 1970-01-01 to 2106-02-07, the DateTime range every backend holds exactly';
  }
  return null;
}

/**
 * The `{name:Type}` placeholders of a SQL definition, each naming a declared parameter. The SQL
 * must be written in the definition: a parameter holding SQL text would let its giver write SQL.
 */
function sqlParamsOf(
  query: Record<string, unknown>,
  params: Readonly<Record<string, ParamSpec>>,
  fail: (message: string) => never,
): Map<string, SqlParameterType> {
  const out = new Map<string, SqlParameterType>();
  if (query.sql_query === undefined) return out;
  if (placeholderName(query.sql_query) !== undefined || typeof query.sql_query !== 'string') {
    fail('sql_query must be SQL text written in the definition, not a parameter');
  }
  if (Object.hasOwn(query, 'parameters')) {
    fail('query holds parameters; SQL parameter values come from params ({name:Type} in the SQL)');
  }
  const found = findSqlPlaceholders(query.sql_query as string);
  if (!found.ok) return fail(`sql_query: ${found.error}`);
  for (const { name, type } of found.placeholders) {
    if (!Object.hasOwn(params, name)) {
      fail(`sql_query: {${name}:${type}} names no declared parameter (declare it in params)`);
    }
    out.set(name, type);
  }
  return out;
}

/** Why a signer parameter refuses a value, or null when the value fits. */
export function checkSignerValue(spec: SignerParam, value: unknown): string | null {
  const type = spec.type ?? 'string';
  if (typeof value !== type) return `expected a ${type}`;
  if (typeof value === 'string' && value.length > 200) return 'is longer than 200 characters';
  if (typeof value === 'number' && !Number.isFinite(value)) return 'expected a finite number';
  if (spec.enum && !spec.enum.includes(value as ParamValue)) {
    return `expected one of ${spec.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (
    spec.pattern &&
    typeof value === 'string' &&
    !new RegExp(`^(?:${spec.pattern})$`).test(value)
  ) {
    return `does not match the pattern ${spec.pattern}`;
  }
  return null;
}

/**
 * Checks a definition the way it will run: its shape, its placeholders against its declared
 * parameters, then a trial substitution with sample values for every range it allows, each
 * validated by the protocol's request schema. Any failure throws a {@link DefinitionError}
 * whose message starts with `label` (e.g. `query "sales"`).
 */
export function compileDefinition(
  raw: unknown,
  name: string | undefined,
  label = name ? `query "${name}"` : 'the inline definition',
): CompiledDefinition {
  const fail = (message: string): never => {
    throw new DefinitionError(`${label}: ${message}`);
  };
  const shape = queryDefinitionSchema.safeParse(raw);
  if (!shape.success) fail(describeZodError(shape.error, 'definition'));
  const definition = shape.data as QueryDefinition;
  if (Object.hasOwn(definition.query, 'api_key')) {
    fail('query holds an api_key; the key comes from the environment, never from a definition');
  }
  const params = definition.params ?? {};
  for (const placeholder of collectPlaceholders(definition.query)) {
    if (!Object.hasOwn(params, placeholder)) {
      fail(
        `placeholder {"$param": "${placeholder}"} names no declared parameter (declare it in params)`,
      );
    }
  }
  for (const [param, spec] of Object.entries(params)) {
    if (spec.from === 'signer' && spec.default !== undefined) {
      const problem = checkSignerValue(spec, spec.default);
      if (problem) fail(`params.${param}.default ${problem}`);
    }
  }
  const sqlParams = sqlParamsOf(definition.query, params, fail);
  for (const [param, spec] of Object.entries(params)) {
    if (spec.from === 'signer' && spec.default !== undefined && sqlParams.has(param)) {
      const problem = checkSqlParameterValue(
        sqlParams.get(param) as SqlParameterType,
        spec.default,
      );
      if (!problem.ok) fail(`params.${param}.default ${problem.error}`);
    }
  }
  const rangeKeys = Object.keys(definition.ranges ?? {});
  if (definition.defaultRange !== undefined && !rangeKeys.includes(definition.defaultRange)) {
    fail(`defaultRange '${definition.defaultRange}' is not one of its ranges`);
  }
  let graph: GraphType | undefined;
  let sql = false;
  for (const { rangeKey, body } of trialBodies(definition, params, sqlParams)) {
    const parsed = parseQueryRequest(body);
    if (!parsed.ok) fail(`${rangeKey ? `with range '${rangeKey}', ` : ''}${parsed.error}`);
    else {
      graph = parsed.value.graph_type;
      sql = isSqlQuery(parsed.value);
    }
  }
  if (!graph) return fail('no graph type');
  if (sql && rangeKeys.length) {
    fail('ranges apply to collection queries only (a SQL query carries its own time window)');
  }
  // Samples rows carry whole events and SQL Table rows any column: those two need the allowlist.
  // A collection Table returns only its split and value, so fields would mean nothing there.
  const fieldsAllowed = sql ? graph === 'Table' : graph === 'Samples';
  if (definition.fields && !fieldsAllowed) {
    fail(`fields applies to Samples and SQL Table only, not to ${sql ? 'SQL ' : ''}${graph}`);
  }
  if (!sql && graph === 'Samples' && !definition.fields) {
    fail('Samples needs fields: the allowlist of event fields a viewer may see');
  }
  return {
    name,
    definition,
    graph,
    sql,
    params,
    sqlParams,
    rangeKeys,
    defaultRange: definition.defaultRange ?? rangeKeys[0],
    trimKey: JSON.stringify([
      name ?? '',
      definition.title ?? '',
      definition.fields ?? [],
      definition.seriesNames ?? {},
    ]),
  };
}

/**
 * The request bodies of a definition's trial run: one per range it allows (or one without a
 * range), each parameter filled with a value that satisfies it. Compiling validates them; the
 * config check (`analytics-edge check`) runs them against the workspace.
 */
export function trialBodies(
  definition: QueryDefinition,
  params: Readonly<Record<string, ParamSpec>>,
  sqlParams: ReadonlyMap<string, SqlParameterType>,
): Array<{ rangeKey: string | undefined; body: Record<string, unknown> }> {
  const samples: Record<string, ParamValue> = {};
  for (const [param, spec] of Object.entries(params)) {
    samples[param] = sampleValue(spec, sqlParams.get(param));
  }
  const withValues = withSqlParameters(
    substituteParams(definition.query, samples) as Record<string, unknown>,
    sqlParams,
    samples,
  );
  const rangeKeys = Object.keys(definition.ranges ?? {});
  return (rangeKeys.length ? rangeKeys : [undefined]).map((rangeKey) => ({
    rangeKey,
    body: applyRange(withValues, definition, rangeKey),
  }));
}

/** Adds the values of the SQL's `{name:Type}` parameters to a body as `parameters` (a copy). */
export function withSqlParameters(
  body: Record<string, unknown>,
  sqlParams: ReadonlyMap<string, SqlParameterType>,
  values: Readonly<Record<string, ParamValue>>,
): Record<string, unknown> {
  if (sqlParams.size === 0) return body;
  const parameters: Record<string, ParamValue> = {};
  for (const name of sqlParams.keys()) {
    const value = values[name];
    if (value !== undefined) parameters[name] = value;
  }
  return { ...body, parameters };
}

/** Sets a range's start, end and granularity on a query body (a copy). */
export function applyRange(
  body: Record<string, unknown>,
  definition: QueryDefinition,
  rangeKey: string | undefined,
): Record<string, unknown> {
  if (rangeKey === undefined) return body;
  const range = definition.ranges?.[rangeKey];
  if (!range) return body;
  const out: Record<string, unknown> = { ...body, start: range.start, end: range.end };
  if (range.granularity) out.granularity = range.granularity;
  return out;
}

/** Compiles a whole registry, naming the first broken definition. */
export function compileRegistry(
  queries: Readonly<Record<string, unknown>>,
): Map<string, CompiledDefinition> {
  const out = new Map<string, CompiledDefinition>();
  for (const [name, raw] of Object.entries(queries)) {
    if (!/^[A-Za-z0-9_.:-]{1,200}$/.test(name)) {
      throw new DefinitionError(`query "${name}": names use letters, digits and . _ : - only`);
    }
    out.set(name, compileDefinition(raw, name));
  }
  return out;
}
