import type { MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';

/**
 * Security headers of the host's pages. The CSP allows scripts, styles and fetches from this
 * origin only and no inline script at all: the element bundle and `dashboard.js` are files, and
 * the element styles itself with constructable stylesheets and CSSOM, which need no
 * `'unsafe-inline'`. The edge's routes keep their own headers (see `createHostApp`).
 */
export function hostSecurityHeaders(options: { https: boolean }): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:', 'blob:'],
      connectSrc: ["'self'"],
      fontSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    referrerPolicy: 'same-origin',
    xFrameOptions: 'DENY',
    strictTransportSecurity: options.https ? 'max-age=15552000; includeSubDomains' : false,
  });
}
