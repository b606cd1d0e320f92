import { type ParamValue, parseQueryRequest, type QueryRequest } from '@analytics-chart/protocol';
import { canonicalJson } from './canonical-json.ts';
import { applyRange, type CompiledDefinition, withSqlParameters } from './compile-definition.ts';
import { substituteParams } from './substitute-params.ts';

/** A definition with its locked parameters and a range applied: what the backend will run. */
export interface ResolvedQuery {
  /** The request body without `api_key`, exactly as the definition wrote it. */
  body: Record<string, unknown>;
  /** The same request parsed by the protocol, with every default applied. */
  parsed: QueryRequest;
  /** The canonical text of `parsed`: the result cache's key. */
  cacheKey: string;
  rangeKey: string | undefined;
}

/**
 * Substitutes the locked parameters (falling back to the definition's defaults), gives the SQL's
 * `{name:Type}` parameters their values in `parameters` (the backend binds or renders them), applies
 * the range, then validates the result with the protocol. Fails with a sentence when a parameter
 * has no value or the request no longer validates (a definition edited after the id was signed).
 */
export function resolveQuery(
  compiled: CompiledDefinition,
  locked: Readonly<Record<string, ParamValue>>,
  rangeKey: string | undefined,
): { ok: true; value: ResolvedQuery } | { ok: false; error: string } {
  const values: Record<string, ParamValue> = {};
  for (const [name, spec] of Object.entries(compiled.params)) {
    const value = Object.hasOwn(locked, name)
      ? locked[name]
      : spec.from === 'signer'
        ? spec.default
        : undefined;
    if (value === undefined) return { ok: false, error: `parameter '${name}' has no value` };
    values[name] = value;
  }
  const substituted = withSqlParameters(
    substituteParams(compiled.definition.query, values) as Record<string, unknown>,
    compiled.sqlParams,
    values,
  );
  const body = applyRange(substituted, compiled.definition, rangeKey);
  const parsed = parseQueryRequest(body);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  return {
    ok: true,
    value: { body, parsed: parsed.value, cacheKey: canonicalJson(parsed.value), rangeKey },
  };
}
