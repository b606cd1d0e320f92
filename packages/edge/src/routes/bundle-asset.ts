import type { BundleSource } from '../config/edge-config.ts';

/** The bundle as served: bytes, a content hash for the immutable name, and the entity tag. */
export interface BundleAsset {
  bytes: Uint8Array<ArrayBuffer>;
  /** First 16 hex digits of the SHA-256 of the bytes. */
  hash: string;
  etag: string;
  /** `analytics-chart.<hash>.js`. */
  fileName: string;
}

async function toAsset(content: string | Uint8Array): Promise<BundleAsset> {
  // A copy: the asset owns ArrayBuffer-backed bytes that every runtime's Response accepts.
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content.slice();
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  const hash = Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
  return { bytes, hash, etag: `"${hash}"`, fileName: `analytics-chart.${hash}.js` };
}

/**
 * Serves the bundle source as assets, hashing each distinct content once. A loader is called per
 * request so a rebuilt bundle (development) is picked up; it should cache its own reads.
 */
export function bundleAssets(source: BundleSource | undefined): () => Promise<BundleAsset | null> {
  let last: { content: string | Uint8Array; asset: Promise<BundleAsset> } | undefined;
  return async () => {
    if (source === undefined) return null;
    const content = typeof source === 'function' ? await source() : source;
    if (content === null || content === undefined) return null;
    if (last?.content !== content) last = { content, asset: toAsset(content) };
    return last.asset;
  };
}
