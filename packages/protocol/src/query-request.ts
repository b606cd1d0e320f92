import * as z from 'zod';
import { type FilterGroups, filtersSchema } from './filters.ts';
import { bindSqlParameters, type SqlParameter } from './sql-parameters.ts';
import { parseTimeOffset, parseTimeValue, type TimeValue } from './time-value.ts';
import { DEFAULT_TIME_ZONE, isValidTimeZone } from './time-zone.ts';
import {
  AGGREGATIONS,
  type Aggregation,
  COLLECTION_GRAPH_TYPES,
  type CollectionGraphType,
  DEFAULT_COLLECTION,
  GRANULARITIES,
  type Granularity,
  isTimeSeries,
  matchWord,
  ORDERS,
  type Order,
  SPLIT_GRAPH_TYPES,
  SQL_GRAPH_TYPES,
  type SqlGraphType,
} from './vocabulary.ts';

/** Longest SQL text accepted; anything larger is a mistake or an attack. */
export const MAX_SQL_LENGTH = 100_000;

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** An error message that tells a missing field from one of the wrong type. */
export function expected(what: string) {
  return (issue: { input?: unknown }) =>
    issue.input === undefined ? REQUIRED : `expected ${what}`;
}

/** The message of a missing required field; {@link describeZodError} words it as a sentence. */
export const REQUIRED = 'is required';

function wordSchema<T extends string>(
  label: string,
  words: readonly T[],
  aliases: Readonly<Record<string, T>> = {},
) {
  return z.string({ error: expected(`${label} as a string`) }).transform((input, ctx) => {
    const word = matchWord(words, input, aliases);
    if (word) return word;
    ctx.addIssue({
      code: 'custom',
      message: `unknown ${label} '${clip(input)}'; expected one of ${words.join(', ')}`,
    });
    return z.NEVER;
  });
}

const nameSchema = (what: string) =>
  z
    .string({ error: expected(`${what} as a string`) })
    .trim()
    .min(1, { error: `expected a non-empty ${what}` })
    .max(200, { error: `${what} is longer than 200 characters` })
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    .refine((s) => !/[\u0000-\u001f]/.test(s), { error: `${what} contains control characters` });

/** An optional name where clients send `null` or `""` for "none". */
const optionalName = (what: string) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? null : v),
    nameSchema(what).nullish(),
  );

const timeZoneSchema = z
  .string({ error: 'expected an IANA time zone name such as Europe/London' })
  .nullish()
  .transform((zone, ctx) => {
    if (zone === null || zone === undefined || zone.trim() === '') return DEFAULT_TIME_ZONE;
    if (isValidTimeZone(zone.trim())) return zone.trim();
    ctx.addIssue({ code: 'custom', message: `unknown time zone '${clip(zone)}'` });
    return z.NEVER;
  });

const timeValueSchema = z
  .union([z.string(), z.number()], {
    error: expected('a time: now, "<N> <unit> ago", a date or Unix seconds'),
  })
  .refine((value) => parseTimeValue(value) !== null, {
    error: (issue) => `could not parse '${clip(String(issue.input))}' as a time`,
  });

const optionalFilters = filtersSchema.optional();

const customizationsSchema = z
  .looseObject({ hideMissing: z.boolean({ error: 'expected true or false' }).optional() })
  .nullish()
  .transform((c) => c ?? {});

const collectionSchema = z
  .object({
    collection: optionalName('collection name'),
    IANA_time_zone: timeZoneSchema,
    graph_type: wordSchema('graph type', COLLECTION_GRAPH_TYPES),
    start: timeValueSchema,
    end: timeValueSchema,
    filters: optionalFilters,
    aggregation: wordSchema('aggregation', AGGREGATIONS, {
      Median: 'P50',
      Average: 'Avg',
    }).nullish(),
    metric: optionalName('metric field'),
    split: optionalName('split field'),
    granularity: wordSchema('granularity', GRANULARITIES).nullish(),
    compare: z
      .string({ error: 'expected an offset such as "1 week ago"' })
      .nullish()
      .refine(
        (v) => v === null || v === undefined || v.trim() === '' || parseTimeOffset(v) !== null,
        {
          error: (issue) =>
            `could not parse '${clip(String(issue.input))}' as an offset; use "<N> <unit> ago" such as "1 week ago"`,
        },
      ),
    compare_filters: optionalFilters,
    numerator_filters: optionalFilters,
    denominator_filters: optionalFilters,
    order: wordSchema('order', ORDERS).nullish(),
    customizations: customizationsSchema,
  })
  .superRefine((q, ctx) => {
    const graph = q.graph_type;
    const aggregation = q.aggregation ?? 'Count';
    if (graph !== 'Samples' && aggregation !== 'Count' && !q.metric) {
      ctx.addIssue({
        code: 'custom',
        path: ['metric'],
        message: `${aggregation} needs a metric (the numeric field to aggregate)`,
      });
    }
    if ((SPLIT_GRAPH_TYPES as readonly string[]).includes(graph) && !q.split) {
      ctx.addIssue({ code: 'custom', path: ['split'], message: `${graph} needs a split field` });
    }
    if (graph === 'Ratio Line') {
      for (const key of ['numerator_filters', 'denominator_filters'] as const) {
        if (!q[key])
          ctx.addIssue({ code: 'custom', path: [key], message: `Ratio Line needs ${key}` });
      }
    }
    if (graph === 'Compare Line' && !q.compare_filters) {
      ctx.addIssue({
        code: 'custom',
        path: ['compare_filters'],
        message: 'Compare Line needs compare_filters',
      });
    }
    if (q.compare?.trim()) {
      if (graph === 'Compare Line') {
        ctx.addIssue({
          code: 'custom',
          path: ['compare'],
          message: 'Compare Line compares two populations; it takes compare_filters, not compare',
        });
      } else if (!isTimeSeries(graph) && graph !== 'Single Value') {
        ctx.addIssue({
          code: 'custom',
          path: ['compare'],
          message: `${graph} has no time axis to compare; compare works with lines and Single Value`,
        });
      }
    }
  })
  .transform(
    (q): CollectionQuery => ({
      collection: q.collection ?? DEFAULT_COLLECTION,
      IANA_time_zone: q.IANA_time_zone,
      graph_type: q.graph_type,
      start: q.start,
      end: q.end,
      filters: q.filters ?? [],
      aggregation: q.aggregation ?? 'Count',
      metric: q.metric ?? null,
      split: q.split ?? null,
      granularity: q.granularity ?? 'Auto',
      compare: q.compare?.trim() ? q.compare.trim() : null,
      compare_filters: q.compare_filters ?? null,
      numerator_filters: q.numerator_filters ?? null,
      denominator_filters: q.denominator_filters ?? null,
      order: q.order ?? 'Descending',
      customizations: q.customizations,
    }),
  );

/** The mapping fields each SQL graph shape needs (the spec's column-mapping table). */
export const SQL_COLUMN_MAPPINGS: Record<SqlGraphType, readonly SqlMappingField[]> = {
  'Single Line': ['timestamp_column', 'value_column'],
  'Multi Line': ['timestamp_column', 'value_column', 'split_column'],
  'Stacked Line': ['timestamp_column', 'value_column', 'split_column'],
  Funnel: ['label_column', 'value_column'],
  'Bar Chart': ['label_column', 'value_column'],
  'Pie Chart': ['label_column', 'value_column'],
  'Single Value': ['label_column', 'value_column'],
  Table: [],
};

export type SqlMappingField = 'timestamp_column' | 'value_column' | 'split_column' | 'label_column';

const sqlSchema = z
  .object({
    sql_query: z
      .string({ error: expected('SQL text') })
      .trim()
      .min(1, { error: 'expected a non-empty SQL query' })
      .max(MAX_SQL_LENGTH, { error: `SQL is longer than ${MAX_SQL_LENGTH} characters` }),
    graph_type: wordSchema('SQL graph type', SQL_GRAPH_TYPES),
    IANA_time_zone: timeZoneSchema,
    timestamp_column: optionalName('column name'),
    value_column: optionalName('column name'),
    split_column: optionalName('column name'),
    label_column: optionalName('column name'),
    customizations: customizationsSchema,
    parameters: z
      .record(z.string().max(64), z.union([z.string(), z.number(), z.boolean()]), {
        error: 'expected an object of parameter values',
      })
      .nullish(),
  })
  .superRefine((q, ctx) => {
    const bound = bindSqlParameters(q.sql_query, q.parameters ?? undefined);
    if (!bound.ok) ctx.addIssue({ code: 'custom', path: ['parameters'], message: bound.error });
    for (const field of SQL_COLUMN_MAPPINGS[q.graph_type]) {
      if (!q[field]) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${q.graph_type} in SQL mode needs ${field}`,
        });
      }
    }
  })
  .transform((q): SqlQuery => {
    const bound = bindSqlParameters(q.sql_query, q.parameters ?? undefined);
    const parameters = bound.ok ? bound.value.parameters : {};
    return {
      sql_query: q.sql_query,
      graph_type: q.graph_type,
      IANA_time_zone: q.IANA_time_zone,
      timestamp_column: q.timestamp_column ?? null,
      value_column: q.value_column ?? null,
      split_column: q.split_column ?? null,
      label_column: q.label_column ?? null,
      customizations: q.customizations,
      ...(Object.keys(parameters).length ? { parameters } : {}),
    };
  });

/** Rendering options; `hideMissing` also drops empty buckets from time series. */
export interface Customizations {
  hideMissing?: boolean;
  [key: string]: unknown;
}

/** A collection-mode query with every default applied and filters in normal form. */
export interface CollectionQuery {
  collection: string;
  IANA_time_zone: string;
  graph_type: CollectionGraphType;
  start: TimeValue;
  end: TimeValue;
  filters: FilterGroups;
  aggregation: Aggregation;
  metric: string | null;
  split: string | null;
  granularity: Granularity;
  compare: string | null;
  compare_filters: FilterGroups | null;
  numerator_filters: FilterGroups | null;
  denominator_filters: FilterGroups | null;
  order: Order;
  customizations: Customizations;
}

/** A SQL-mode query: the SQL text plus the column mappings of its graph shape. */
export interface SqlQuery {
  sql_query: string;
  graph_type: SqlGraphType;
  IANA_time_zone: string;
  timestamp_column: string | null;
  value_column: string | null;
  split_column: string | null;
  label_column: string | null;
  customizations: Customizations;
  /**
   * The values of the SQL's `{name:Type}` placeholders, checked against their types; present only
   * when the SQL has placeholders. An extension of the hosted service's request: the engine binds
   * them as prepared-statement parameters.
   */
  parameters?: Readonly<Record<string, SqlParameter>>;
}

/** A parsed query in either mode. The API key is not part of it: it is stripped on parse. */
export type QueryRequest = CollectionQuery | SqlQuery;

/** Tells the two modes apart. `sql_query` wins when present, as the spec's rule 7 says. */
export function isSqlQuery(query: QueryRequest): query is SqlQuery {
  return 'sql_query' in query;
}

/**
 * The body of `POST /api/visualize/data` without `api_key`, in either mode. Unknown keys are
 * ignored and `null` is accepted wherever real clients send it.
 */
export const queryRequestSchema: z.ZodType<QueryRequest, unknown> = z
  .record(z.string(), z.unknown(), { error: 'expected a JSON object' })
  .pipe(
    z.custom<Record<string, unknown>>().transform((body, ctx): QueryRequest => {
      const sql = body.sql_query !== undefined && body.sql_query !== null;
      const result = (sql ? sqlSchema : collectionSchema).safeParse(body);
      if (result.success) return result.data;
      for (const issue of result.error.issues) ctx.addIssue(issue as never);
      return z.NEVER;
    }),
  );
