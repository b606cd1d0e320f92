import * as z from 'zod';

/**
 * The claims of a signed query id (a compact JWT). The header carries `alg` and `kid`; these
 * are the payload's fields, with the registered JWT claims alongside our three short ones.
 */

/** A locked parameter value substituted into `{"$param": name}` placeholders. */
export type ParamValue = string | number | boolean;

const paramValue = z.union([z.string().max(200), z.number(), z.boolean()], {
  error: 'expected a string, number or boolean parameter',
});

export const signedQueryClaimsSchema = z
  .object({
    /** Name of a query in the edge's registry. */
    q: z.string().min(1).max(200).optional(),
    /** An inline query definition, for ids minted by the CLI or an authoring page. */
    d: z.record(z.string(), z.unknown()).optional(),
    /** Locked parameters; a viewer can never change them. */
    p: z.record(z.string(), paramValue).optional(),
    /** The host session's subject when the id is session-bound. */
    sub: z.string().min(1).max(200).optional(),
    /** True for public embeds: no session check. */
    pub: z.boolean().optional(),
    exp: z.number().int(),
    iat: z.number().int(),
    nbf: z.number().int().optional(),
    jti: z.string().min(1).max(100),
    aud: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .refine((c) => (c.q === undefined) !== (c.d === undefined), {
    error: 'a signed query names a registry query (q) or carries a definition (d), not both',
  })
  .refine((c) => c.pub === true || c.sub !== undefined, {
    error: 'a signed query is either public (pub) or bound to a session (sub)',
  });

export type SignedQueryClaims = z.infer<typeof signedQueryClaimsSchema>;
