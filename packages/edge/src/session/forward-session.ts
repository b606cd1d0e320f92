import type { Context } from 'hono';
import * as z from 'zod';
import type { Authorize, Session } from './session.ts';

/** Options of {@link forwardSession}. */
export interface ForwardSessionOptions {
  /** The host endpoint answering `{subject, tenant?}` for a signed-in cookie, or 401. */
  url: string;
  /** Only these cookies are forwarded. @default every cookie of the request */
  cookies?: readonly string[];
  /** Time limit in milliseconds. @default 3000 */
  timeoutMs?: number;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
}

const sessionSchema = z.looseObject({
  subject: z.string().min(1).max(200),
  tenant: z.union([z.string().max(200), z.number()]).optional(),
});

/**
 * A session hook that asks the host: it forwards the request's cookie to `url` (e.g. the host
 * app's `/session` endpoint) and reads `{subject, tenant?}` from a 200, or "nobody" from 401 or
 * 403. Anything else means the session could not be checked, and the edge answers 502 rather
 * than guessing.
 */
export function forwardSession(options: ForwardSessionOptions): Authorize {
  const url = new URL(options.url).href;
  const timeoutMs = options.timeoutMs ?? 3000;
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  return async (c: Context): Promise<Session | null> => {
    let cookie = c.req.header('cookie') ?? '';
    if (options.cookies) {
      cookie = cookie
        .split(';')
        .filter((part) => options.cookies?.includes(part.split('=')[0]?.trim() ?? ''))
        .join(';');
    }
    if (!cookie.trim()) return null;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await doFetch(url, {
        headers: { cookie, accept: 'application/json' },
        signal: controller.signal,
        redirect: 'manual',
      });
      if (response.status === 401 || response.status === 403) return null;
      if (response.status !== 200) throw new Error(`session endpoint answered ${response.status}`);
      const parsed = sessionSchema.safeParse(await response.json());
      if (!parsed.success) throw new Error('session endpoint answered without a subject');
      return parsed.data as Session;
    } finally {
      clearTimeout(timer);
    }
  };
}
