import * as z from 'zod';
import type { EdgeModuleConfig } from '../config/edge-module-config.ts';
import type { ForwardSessionOptions } from '../session/forward-session.ts';

/**
 * What `analytics-edge serve --config FILE` reads: the code-side config of an edge module plus
 * `session`, the host app's endpoint the forwarded-cookie check asks. Secrets never live here:
 * the signing keys, the workspace key and the service URL come from the environment.
 */
export type ServeConfig = EdgeModuleConfig & {
  /** The host's session endpoint (see `forwardSession`); without it only public ids work. */
  session?: Omit<ForwardSessionOptions, 'fetch'>;
  /** Who may use the admin API over issued ids: session subjects, listed. */
  admins?: { subjects: string[] };
  /**
   * The embed studio (`<base>/studio`): the session subjects listed, or every signed-in session
   * (`subjects: "*"`), publish the queries listed (default: every query).
   */
  studioRule?: { subjects: string[] | '*'; queries?: string[] };
};

const duration = z.union([z.string(), z.number()]);
const rateRule = z.union([
  z.literal(false),
  z.strictObject({ perSecond: z.number(), burst: z.number() }),
]);

/**
 * The JSON form of {@link ServeConfig}: only plain data, unknown keys refused so a misspelt
 * setting is an error rather than silently ignored. Query definitions are checked by the edge
 * itself when it compiles the registry.
 */
const jsonServeConfig = z.strictObject({
  $schema: z.string().optional(),
  publicUrl: z.url().optional(),
  queries: z.record(z.string(), z.record(z.string(), z.unknown())),
  session: z
    .strictObject({
      url: z.url(),
      cookies: z.array(z.string().min(1)).optional(),
      timeoutMs: z.number().int().positive().optional(),
    })
    .optional(),
  allowedOrigins: z.array(z.string()).optional(),
  admins: z.strictObject({ subjects: z.array(z.string().min(1).max(200)).max(1000) }).optional(),
  studio: z
    .strictObject({
      subjects: z.union([z.literal('*'), z.array(z.string().min(1).max(200)).max(1000)]),
      queries: z.array(z.string().min(1).max(200)).max(1000).optional(),
    })
    .optional(),
  revokedIds: z.array(z.string()).optional(),
  maxBodyBytes: z.number().int().positive().optional(),
  ids: z
    .strictObject({
      sessionTtl: duration.optional(),
      maxSessionTtl: duration.optional(),
      publicTtl: duration.optional(),
      renewGrace: duration.optional(),
      verifiedCacheSize: z.number().int().nonnegative().optional(),
      inlineDefinitions: z.boolean().optional(),
      clockSkewSeconds: z.number().nonnegative().optional(),
      maxLength: z.number().int().positive().optional(),
    })
    .optional(),
  cache: z
    .strictObject({
      ttl: duration.optional(),
      staleIfError: duration.optional(),
      maxEntries: z.number().int().nonnegative().optional(),
    })
    .optional(),
  rateLimit: z.strictObject({ perId: rateRule.optional(), perIp: rateRule.optional() }).optional(),
});

/** Checks a parsed JSON config; throws one sentence naming the first wrong field. */
export function parseJsonServeConfig(value: unknown): ServeConfig {
  const parsed = jsonServeConfig.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw new Error(`${where}${issue?.message ?? 'not a valid config'}`);
  }
  const { $schema: _schema, studio, ...config } = parsed.data;
  // Definitions are checked by compileRegistry when the edge starts.
  return { ...config, ...(studio ? { studioRule: studio } : {}) } as unknown as ServeConfig;
}
