import type { Context } from 'hono';
import type { Deny } from '../http/deny.ts';
import type { Step } from '../http/pipeline.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';

/**
 * Step: an id with an audience is shown only on the sites it names. A request without an
 * `Origin` (same-origin GET, server-side fetch) passes: the browser sends one whenever a page of
 * another origin asks.
 */
export function checkAudience(
  deny: Deny,
): Step<{ readonly c: Context; readonly verified: VerifiedId }> {
  return ({ c, verified }) => {
    if (!verified.audience) return;
    const origin = c.req.header('origin');
    if (origin && !verified.audience.includes(origin)) {
      deny(
        'forbidden',
        'This chart may not be shown on this site.',
        verified.tag,
        `origin ${origin.slice(0, 100)} not in aud`,
      );
    }
  };
}
