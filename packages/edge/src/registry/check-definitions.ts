import { type CollectionQuery, isSqlQuery, parseQueryRequest } from '@analytics-chart/protocol';
import { type Backend, BackendError } from '../backend/backend.ts';
import { type CompiledDefinition, trialBodies } from './compile-definition.ts';
import { placeholderName } from './substitute-params.ts';

/** One thing a config check found: about one query of the registry, or about the workspace. */
export interface DefinitionFinding {
  /** The registry name, or undefined when the finding is about the workspace or the service. */
  query?: string;
  /** `error`: the query cannot draw what it means to; `warning`: it may draw an empty chart. */
  level: 'error' | 'warning';
  message: string;
}

/** Options of {@link checkDefinitions}. */
export interface CheckDefinitionsOptions {
  /** Run every definition once per range it allows. @default true */
  run?: boolean;
  /** Look for each field a collection query names among its collection's events. @default true */
  fields?: boolean;
  signal?: AbortSignal;
}

/** The fields a collection query reads: its metric, its split and every filter's field. */
export function fieldsRead(
  query: CollectionQuery,
  samplesFields: readonly string[] = [],
): string[] {
  const fields = new Set<string>();
  if (query.metric) fields.add(query.metric);
  if (query.split) fields.add(query.split);
  for (const groups of [
    query.filters,
    query.compare_filters,
    query.numerator_filters,
    query.denominator_filters,
  ]) {
    for (const group of groups ?? []) for (const [field] of group) fields.add(field);
  }
  for (const field of samplesFields) fields.add(field);
  return [...fields];
}

/** A backend failure as a sentence for the operator (the backend already kept the key out). */
function describeFailure(error: unknown): string {
  if (!(error instanceof BackendError)) return `failed: ${(error as Error).message}`;
  switch (error.kind) {
    case 'key_rejected':
      return 'the service refused the workspace key (Invalid API KEY): check ANALYTICS_API_KEY';
    case 'timeout':
      return `the service did not answer in time (${error.message})`;
    case 'unavailable':
      return `the service is unavailable (${error.message})`;
    case 'malformed':
      return `the service's answer is not what the API specifies (${error.message})`;
    default:
      return `the service refused it: ${error.message}`;
  }
}

/**
 * Checks a registry against the workspace its backend queries: that each collection a query
 * reads exists, that each definition runs for every range it allows, and that each field it
 * names appears in its collection's events within its default range. Nothing here changes the
 * workspace. A wrong collection name is otherwise silent: the service answers every query of
 * a collection it does not have with empty results and status 200.
 */
export async function checkDefinitions(
  registry: ReadonlyMap<string, CompiledDefinition>,
  backend: Backend,
  options: CheckDefinitionsOptions = {},
): Promise<DefinitionFinding[]> {
  const { signal } = options;
  const findings: DefinitionFinding[] = [];
  let collections: Set<string> | undefined;
  if (backend.collections) {
    try {
      collections = new Set(await backend.collections(signal));
    } catch (error) {
      // Without the list nothing below can be trusted: a key or network problem says it all.
      return [{ level: 'error', message: `listing the collections: ${describeFailure(error)}` }];
    }
  } else {
    findings.push({
      level: 'warning',
      message: 'the backend cannot list collections, so collection names were not checked',
    });
  }
  const known = collections ? [...collections].sort() : [];
  const looked = new Map<string, Promise<boolean | string>>();

  for (const [name, compiled] of registry) {
    const say = (level: DefinitionFinding['level'], message: string) =>
      findings.push({ query: name, level, message });
    const trials = trialBodies(compiled.definition, compiled.params, compiled.sqlParams);
    const defaultTrial = trials.find((t) => t.rangeKey === compiled.defaultRange) ?? trials[0];
    const parsed = defaultTrial ? parseQueryRequest(defaultTrial.body) : undefined;
    if (!parsed?.ok) continue; // compiling has already refused such a definition
    const query = parsed.value;
    const collectionIsParam = placeholderName(compiled.definition.query.collection) !== undefined;

    if (!isSqlQuery(query) && collections && !collectionIsParam) {
      if (!collections.has(query.collection)) {
        say(
          'error',
          `reads collection '${query.collection}', which the workspace does not have (it has: ${known.join(', ') || 'no collections yet'}); its charts would show no data`,
        );
        continue;
      }
    }

    if (options.run ?? true) {
      let ran = true;
      for (const { rangeKey, body } of trials) {
        try {
          await backend.query(body, signal);
        } catch (error) {
          ran = false;
          say('error', `${rangeKey ? `with range '${rangeKey}', ` : ''}${describeFailure(error)}`);
          break;
        }
      }
      if (!ran) continue;
    }

    if (isSqlQuery(query) || !(options.fields ?? true) || !defaultTrial) continue;
    const window = `${JSON.stringify(query.start)} to ${JSON.stringify(query.end)}`;
    const samplesFields = query.graph_type === 'Samples' ? (compiled.definition.fields ?? []) : [];
    for (const field of fieldsRead(query, samplesFields)) {
      const key = JSON.stringify([query.collection, field, query.start, query.end]);
      let present = looked.get(key);
      if (!present) {
        // Table leaves out the events without its split field: no row means no event has it.
        present = backend
          .query(
            {
              collection: query.collection,
              graph_type: 'Table',
              split: field,
              start: query.start,
              end: query.end,
              IANA_time_zone: query.IANA_time_zone,
            },
            signal,
          )
          .then(
            (envelope) => envelope.result.length > 0,
            (error: unknown) => describeFailure(error),
          );
        looked.set(key, present);
      }
      const found = await present;
      if (typeof found === 'string') say('warning', `looking for field '${field}': ${found}`);
      else if (!found) {
        say(
          'warning',
          `no event of '${query.collection}' from ${window}${compiled.defaultRange ? ` (range '${compiled.defaultRange}')` : ''} has the field '${field}'; check its spelling`,
        );
      }
    }
  }
  return findings;
}
