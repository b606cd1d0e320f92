import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A static file of the host app, read once at start-up. */
export interface Asset {
  bytes: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

const FILES: Record<string, string> = {
  'host-app.css': 'text/css; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
};

/** The host's own static files (`/assets/<name>`): its stylesheet and the dashboard script. */
export function loadAssets(): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(FILES)) {
    const bytes = new Uint8Array(readFileSync(new URL(`./assets/${name}`, import.meta.url)));
    const etag = `"${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}"`;
    assets.set(name, { bytes, type, etag });
  }
  return assets;
}
