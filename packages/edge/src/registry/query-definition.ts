import { GRANULARITIES, type Granularity, type ParamValue } from '@analytics-chart/protocol';
import * as z from 'zod';
import type { Session } from '../session/session.ts';

/** A parameter filled from the signed-in session, e.g. the tenant: never from a request body. */
export interface SessionParam {
  from: 'session';
  /** The session field to read; defaults to the parameter's name. */
  claim?: string;
}

/** A parameter the signer may choose (the sign route's body, `signQueryId`, the CLI). */
export interface SignerParam {
  from: 'signer';
  /** Defaults to `string`. */
  type?: 'string' | 'number' | 'boolean';
  /** The only values allowed. */
  enum?: ParamValue[];
  /** A regular expression a string value must match in full. */
  pattern?: string;
  /** Used when the signer gives no value; without one the parameter is required. */
  default?: ParamValue;
}

/** Where a `{"$param": name}` placeholder's value comes from. */
export type ParamSpec = SessionParam | SignerParam;

/**
 * Which signed-in viewers may have an id of a definition: checked when the sign route signs it,
 * when an id is renewed, and on every data request of a session-bound id. Every condition given
 * must hold. Ids the server signs itself (`signQueryId`, the CLI) are not subject to it.
 */
export interface SignerRule {
  /** `false`: no session may sign it on the sign route (server-side signing only). */
  sessions?: boolean;
  /**
   * Session fields and the values that admit a viewer, e.g. `{role: ['admin', 'analyst']}`. A
   * field holding an array (`roles: ['admin']`) admits when any of its items is listed.
   */
  claims?: Record<string, ParamValue[]>;
  /** A further check of the session (registry definitions only: a function cannot travel in an id). */
  allow?: (session: Session) => boolean | Promise<boolean>;
}

/** One time range a viewer may pick, e.g. `{label: 'Last 7 days', start: '7 days ago', end: 'now'}`. */
export interface RangeOption {
  label: string;
  start: string | number;
  end: string | number;
  granularity?: Granularity;
}

/**
 * A named query the edge may run: any request the protocol accepts (collection or SQL mode,
 * without `api_key`) with `{"$param": name}` placeholders in its values, where each parameter
 * comes from the session or the signer, the ranges a viewer may switch between, and for Samples
 * and Table the fields that may leave the edge.
 */
export interface QueryDefinition {
  title?: string;
  query: Record<string, unknown>;
  params?: Record<string, ParamSpec>;
  ranges?: Record<string, RangeOption>;
  /** The range used when neither the id nor the viewer picks one; defaults to the first. */
  defaultRange?: string;
  /** Samples: the `json` fields returned (dotted paths allowed); SQL Table: the columns returned. */
  fields?: string[];
  /** Series names of Compare Line's two populations; default `All` and `Compared`. */
  seriesNames?: { result?: string; compare?: string };
  /** How long a result stays fresh in the edge's cache; defaults to the edge's setting. */
  cacheSeconds?: number;
  /** Which sessions may sign, renew and use it; by default any signed-in viewer. */
  signers?: SignerRule;
}

const paramValueSchema = z.union([z.string().max(200), z.number(), z.boolean()]);
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

const paramSpecSchema = z.discriminatedUnion('from', [
  z.strictObject({ from: z.literal('session'), claim: z.string().min(1).max(64).optional() }),
  z.strictObject({
    from: z.literal('signer'),
    type: z.enum(['string', 'number', 'boolean']).optional(),
    enum: z.array(paramValueSchema).min(1).optional(),
    pattern: z
      .string()
      .refine(
        (p) => {
          try {
            new RegExp(p);
            return true;
          } catch {
            return false;
          }
        },
        { error: 'is not a valid regular expression' },
      )
      .optional(),
    default: paramValueSchema.optional(),
  }),
]);

const rangeSchema = z.strictObject({
  label: z.string().min(1).max(100),
  start: z.union([z.string(), z.number()]),
  end: z.union([z.string(), z.number()]),
  granularity: z.enum(GRANULARITIES).optional(),
});

/** The shape of a definition; the query inside is checked later against the protocol. */
export const queryDefinitionSchema = z.strictObject({
  title: z.string().max(200).optional(),
  query: z.record(z.string(), z.unknown(), { error: 'expected a query object' }),
  params: z
    .record(z.string().regex(NAME, { error: 'parameter names are identifiers' }), paramSpecSchema)
    .optional(),
  ranges: z
    .record(
      z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, { error: 'range keys are short words' }),
      rangeSchema,
    )
    .optional(),
  defaultRange: z.string().optional(),
  fields: z.array(z.string().min(1).max(200)).min(1).max(100).optional(),
  seriesNames: z
    .strictObject({
      result: z.string().max(100).optional(),
      compare: z.string().max(100).optional(),
    })
    .optional(),
  cacheSeconds: z.number().int().min(0).max(86_400).optional(),
  signers: z
    .strictObject({
      sessions: z.boolean().optional(),
      claims: z
        .record(
          z.string().min(1).max(64),
          z.array(paramValueSchema).min(1, { error: 'list at least one admitted value' }),
        )
        .optional(),
      allow: z
        .custom<SignerRule['allow']>((v) => typeof v === 'function', {
          error: 'expected a function of the session',
        })
        .optional(),
    })
    .optional(),
});
