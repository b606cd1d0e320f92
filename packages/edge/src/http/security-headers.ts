import type { MiddlewareHandler } from 'hono';

/**
 * Headers every edge response carries. JSON answers are never sniffed into script or leaked
 * through a referrer; the bundle is a script that other origins load, so it is the one response
 * that says `cross-origin`.
 */

/**
 * For JSON API answers (data, sign, renew, health, errors). No CSP here: a JSON body under
 * `nosniff` and a JSON content type is never rendered as a document, and every header costs on
 * the hot path; the bundle, which is executable, carries one.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** For the element's bundle: a module script pages on any origin load with a CORS fetch. */
export const BUNDLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
  'Cross-Origin-Resource-Policy': 'cross-origin',
  'Access-Control-Allow-Origin': '*',
};

/**
 * Adds the API headers to answers that other middleware builds (CORS preflights of sign and
 * renew), leaving any header the answer already set.
 */
export const withApiSecurityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) {
    if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  }
};
