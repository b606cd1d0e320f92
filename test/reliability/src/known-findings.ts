/**
 * Defects of the system under test that the hostile-input runs meet, reported to the owners of
 * the parts (see the README's "Reliability and security" section). Each matcher accepts exactly
 * the defective answer to exactly the triggering input, so the case is counted and shown as a
 * finding while every other rule still applies to it and any other failure still fails.
 */
import { readBody } from './engine-oracle.ts';
import { type KnownFinding, nestingDepth } from './fuzz-ledger.ts';
import { MAX_ERROR_LENGTH } from './judge-answer.ts';

/**
 * Engine: an event payload sent as a JSON object nested thousands of levels deep makes
 * `/api/log` and `/api/bulk-log` answer 500 "internal error" instead of a 400: the compact
 * re-serialisation (`JSON.stringify`) and the surrogate check recurse past the stack, and the
 * RangeError reaches the app's error handler (which also logs its stack).
 */
export const ENGINE_DEEP_PAYLOAD_500: KnownFinding = {
  name: 'engine: ingest of an object payload nested ≥ 1,000 levels answers 500 instead of 400',
  matches(request, answer) {
    if (answer.status !== 500 || answer.text !== '{"error":"internal error"}') return false;
    if (!/\/api\/(bulk-)?log$/.test(request.path)) return false;
    const body = readBody(Buffer.from(request.body ?? ''));
    return body.ok && nestingDepth(body.value) >= 1000;
  },
};

/**
 * Engine and protocol: a refusal sentence that echoes a long piece of the request unclipped.
 * The engine's SQL gate clips a quoted token only when it holds no `"` (`clipQuoted`), so
 * `sql_query` = 1,000 × `"` comes back as a 1,044-character error; the protocol's
 * `describeZodError` (used by the edge's sign and renew routes) quotes unknown keys and key
 * paths whole, so a 1,000-character key comes back whole (up to the 16 KB body limit). The
 * caller's own text, so nothing leaks, but not "one clear sentence".
 */
export const UNCLIPPED_ECHO: KnownFinding = {
  name: 'engine SQL gate and protocol describeZodError: refusals echo long input unclipped',
  matches(request, answer) {
    if (answer.status !== 400) return false;
    let error: unknown;
    try {
      error = (JSON.parse(answer.text) as { error?: unknown }).error;
    } catch {
      return false;
    }
    if (typeof error !== 'string' || error.length <= MAX_ERROR_LENGTH) return false;
    // Most of the sentence must be a piece of what was sent (JSON-escaped or not).
    const sent = Buffer.from(request.body ?? '').toString('utf8');
    const unescaped = readBody(Buffer.from(request.body ?? ''));
    const haystack = `${sent}\n${unescaped.ok ? JSON.stringify(unescaped.value) : ''}\n${collectStrings(unescaped.ok ? unescaped.value : undefined)}`;
    const middle = error.slice(
      Math.floor(error.length / 2) - 100,
      Math.floor(error.length / 2) + 100,
    );
    return haystack.includes(middle);
  },
};

/** Every string and key in a value, joined (iteratively: the value may be deep). */
function collectStrings(value: unknown): string {
  const out: string[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, item] of Object.entries(v)) {
        out.push(k);
        stack.push(item);
      }
    }
  }
  return out.join('\n');
}

/**
 * Edge: served with its own `serveEdge` (Node), a path or method no edge route has (`GET
 * /api/sign`, `PUT /api/data`, `/nope`) is answered by the outer Hono app that `serveEdge` mounts
 * the edge into: Hono's default `404 Not Found` as text/plain, without the JSON `{error, code}`
 * and without the security headers. The edge's own `app.notFound` is not consulted for a mounted
 * sub-app.
 */
export const EDGE_PLAIN_404: KnownFinding = {
  name: "edge (serveEdge): unknown routes answer Hono's plain-text 404 without security headers",
  matches(_request, answer) {
    return (
      answer.status === 404 &&
      answer.text === '404 Not Found' &&
      /^text\/plain/.test(answer.headers['content-type'] ?? '') &&
      answer.headers['x-content-type-options'] === undefined
    );
  },
};

/**
 * Edge: CORS preflight answers (`OPTIONS` on the data, sign and renew routes, 204 without a
 * body) carry the CORS headers but none of the security headers the README promises on "every
 * answer" (`X-Content-Type-Options`, `Referrer-Policy`, `Cross-Origin-Resource-Policy`). Low
 * impact (no body to sniff or embed), but not what is documented.
 */
export const EDGE_PREFLIGHT_WITHOUT_SECURITY_HEADERS = {
  name: 'edge: CORS preflight answers (204) carry none of the documented security headers',
  matches(method: string, status: number, missing: readonly string[]): boolean {
    return (
      method === 'OPTIONS' &&
      status === 204 &&
      ['x-content-type-options', 'referrer-policy', 'cross-origin-resource-policy'].every((h) =>
        missing.includes(h),
      )
    );
  },
};
