import type { Context } from 'hono';
import type { Deny } from '../http/deny.ts';
import { EdgeError } from '../http/edge-error.ts';
import type { Step } from '../http/pipeline.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';
import type { CompiledDefinition } from './compile-definition.ts';
import { type ResolvedQuery, resolveQuery } from './resolve-query.ts';

/** The viewer's range choice from the query string, checked against the definition. */
export function viewerRange(url: string, compiled: CompiledDefinition): string | undefined {
  const q = url.indexOf('?');
  if (q < 0 || q === url.length - 1) return undefined;
  const search = new URLSearchParams(url.slice(q + 1));
  let range: string | undefined;
  for (const [key, value] of search) {
    if (key !== 'range') {
      throw new EdgeError(
        'bad_request',
        `Unknown viewer option '${key.slice(0, 40)}'; charts accept range.`,
      );
    }
    if (range !== undefined) throw new EdgeError('bad_request', 'Give range once.');
    range = value;
  }
  if (range === undefined) return undefined;
  if (!compiled.rangeKeys.includes(range)) {
    throw new EdgeError(
      'bad_request',
      compiled.rangeKeys.length
        ? `range '${range.slice(0, 40)}' is not allowed for this chart; choose one of ${compiled.rangeKeys.join(', ')}.`
        : 'This chart has no ranges to choose from.',
    );
  }
  return range;
}

/**
 * Step: the query this request runs: the id's definition with its locked parameters and the
 * range the viewer chose (else the one signed into the id, else the definition's default).
 * Resolved once per id and range, then remembered with the id.
 */
export function resolveForViewer(
  deny: Deny,
): Step<{ readonly c: Context; readonly verified: VerifiedId; query: ResolvedQuery }> {
  return (request) => {
    const { claims, compiled, resolved, tag } = request.verified;
    const chosen = viewerRange(request.c.req.url, compiled);
    const signed =
      claims.r !== undefined && compiled.rangeKeys.includes(claims.r) ? claims.r : undefined;
    const rangeKey = chosen ?? signed ?? compiled.defaultRange;
    let query = resolved.get(rangeKey ?? '');
    if (!query) {
      const outcome = resolveQuery(compiled, claims.p ?? {}, rangeKey);
      if (!outcome.ok) {
        deny(
          'invalid',
          'The query id no longer fits its query; ask for a new one.',
          tag,
          outcome.error,
        );
      }
      query = outcome.value;
      resolved.set(rangeKey ?? '', query);
    }
    request.query = query;
  };
}
