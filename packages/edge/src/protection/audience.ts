import type { Context } from 'hono';
import type { Deny } from '../http/deny.ts';
import type { Step } from '../http/pipeline.ts';
import type { EmbedTickets } from '../tokens/embed-ticket.ts';
import type { VerifiedId } from '../tokens/verified-ids.ts';
import type { RequestLimits } from './request-limits.ts';

/** What a page outside an id's audience is told: the author's next step, not just a "no". */
export function audienceRefusal(site: string): string {
  return `This chart's id does not allow the site ${site.slice(0, 100)}: ask for an id made with --aud ${site.slice(0, 100)}.`;
}

/**
 * Step: an id with an audience is shown only on the sites it names. A request without an
 * `Origin` (same-origin GET, server-side fetch) passes: the browser sends one whenever a page of
 * another origin asks. `Origin: null` (a sandboxed frame, such as WordPress's oEmbed frame) names
 * no site, so for an id with an audience it passes only with the ticket of an embed page
 * rendered for this id and address: that page was framed only where `frame-ancestors` allowed
 * it. On the embed page's own data route (`ticket` set) `Origin: null` always needs the ticket,
 * since that route grants it CORS whatever the host's `allowedOrigins`.
 */
export function checkAudience(
  deny: Deny,
  tickets: EmbedTickets,
  limits: Pick<RequestLimits, 'address'>,
): Step<{
  readonly c: Context;
  readonly nowMs: number;
  readonly verified: VerifiedId;
  readonly ticket?: string | undefined;
}> {
  return ({ c, nowMs, verified, ticket }) => {
    const origin = c.req.header('origin');
    if (!origin) return;
    if (origin !== 'null') {
      if (verified.audience && !verified.audience.includes(origin)) {
        deny(
          'forbidden',
          audienceRefusal(origin),
          verified.tag,
          `origin ${origin.slice(0, 100)} not in aud`,
        );
      }
      return;
    }
    if (!verified.audience && ticket === undefined) return;
    return tickets.check(ticket, verified.claims.jti, limits.address(c), nowMs).then((refusal) => {
      if (refusal === null) return;
      deny(
        'forbidden',
        refusal === 'expired'
          ? 'This chart was open too long; reload the page to see it.'
          : 'This chart may be shown in a sandboxed frame only through its embed page: embed the URL <edge>/embed/<id>, not the chart element.',
        verified.tag,
        `Origin null with ticket ${refusal}`,
      );
    });
  };
}

/**
 * The site a server-side oEmbed request asks for, when the consumer says: WordPress's HTTP API
 * sends `User-Agent: WordPress/<version>; <home URL>` (`WP_Http::request`).
 */
export function askingSite(userAgent: string | undefined): string | undefined {
  const match = /^WordPress\/[^;\s]{1,40}; (https?:\/\/\S{1,2000})$/.exec(userAgent ?? '');
  if (!match?.[1]) return undefined;
  try {
    return new URL(match[1]).origin;
  } catch {
    return undefined;
  }
}

/**
 * Step (oEmbed): an id whose audience excludes the site that asks is refused with an error
 * rather than a frame that would only be refused by the browser. Unknown askers pass.
 */
export function checkAskingSite(
  deny: Deny,
): Step<{ readonly c: Context; readonly verified: VerifiedId }> {
  return ({ c, verified }) => {
    if (!verified.audience) return;
    const site = askingSite(c.req.header('user-agent'));
    if (site && !verified.audience.includes(site)) {
      deny('forbidden', audienceRefusal(site), verified.tag, `asking site ${site} not in aud`);
    }
  };
}
