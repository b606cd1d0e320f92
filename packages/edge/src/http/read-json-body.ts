import { describeZodError } from '@analytics-chart/protocol';
import type { Context } from 'hono';
import type * as z from 'zod';
import { EdgeError } from './edge-error.ts';

/**
 * A JSON body checked against `schema`. The content type is required, which also forces a CORS
 * preflight that these routes never answer, so other sites' forms cannot post to them.
 */
export async function readJsonBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
    throw new EdgeError('bad_request', 'Send the body as application/json.', { status: 415 });
  }
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new EdgeError('bad_request', 'The request body is not valid JSON.');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new EdgeError('bad_request', `${describeZodError(parsed.error)}.`);
  return parsed.data;
}
