import { type SignedQueryClaims, signedQueryClaimsSchema } from '@analytics-chart/protocol';
import * as z from 'zod';

/**
 * The claims the edge reads from a verified id: the protocol's signed-query claims plus `r`, the
 * key of the time range the chart opens with (one of the definition's ranges; the viewer may
 * still pick another one the definition allows).
 */
export type QueryIdClaims = SignedQueryClaims & { r?: string };

const extraClaimsSchema = z.object({ r: z.string().min(1).max(64).optional() });

/** Validates a decoded payload; returns the claims or the sentence explaining the refusal. */
export function parseQueryIdClaims(
  payload: unknown,
): { ok: true; claims: QueryIdClaims } | { ok: false; error: string } {
  const base = signedQueryClaimsSchema.safeParse(payload);
  if (!base.success) return { ok: false, error: base.error.issues[0]?.message ?? 'bad claims' };
  const extra = extraClaimsSchema.safeParse(payload);
  if (!extra.success) return { ok: false, error: 'r: expected a range key' };
  const claims: QueryIdClaims = { ...base.data };
  if (extra.data.r !== undefined) claims.r = extra.data.r;
  return { ok: true, claims };
}
