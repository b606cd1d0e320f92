/**
 * Headers every edge response carries. JSON answers can never be rendered as a page
 * (`default-src 'none'`), never sniffed into script, and never framed; the bundle is a script that
 * other origins load, so it is the one response that says `cross-origin`.
 */

/** For JSON API answers (data, sign, renew, health, errors). */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

/** For the element's bundle: a module script pages on any origin load with a CORS fetch. */
export const BUNDLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
  'Cross-Origin-Resource-Policy': 'cross-origin',
  'Access-Control-Allow-Origin': '*',
};
