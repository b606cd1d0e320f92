/**
 * Serves the built CDN bundle byte for byte at `/cdn/analytics-chart.js`, as an edge would: the
 * dev server's own pipeline rewrites JavaScript it serves, which would test its output instead.
 */
import { readFileSync } from 'node:fs';

const BUNDLE = new URL('../../dist/analytics-chart.js', import.meta.url);

/** Koa middleware for `/cdn/analytics-chart.js`. */
export function serveBundle() {
  return async function serveBundleMiddleware(ctx, next) {
    if (ctx.path !== '/cdn/analytics-chart.js') return next();
    ctx.set('Content-Type', 'text/javascript; charset=utf-8');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = readFileSync(BUNDLE);
  };
}
