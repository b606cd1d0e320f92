/**
 * A strong entity tag for a body: its length and a 64-bit hash (two 32-bit multiply-xor lanes
 * over the bytes, as in cyrb53). Not a cryptographic digest, on purpose: a tag is only ever
 * compared with itself to answer 304, and WebCrypto's digest is asynchronous, which would put an
 * await and a thread-pool hop into every cache fill.
 */
export function entityTag(bytes: Uint8Array): string {
  let h1 = 0xdeadbeef ^ bytes.length;
  let h2 = 0x41c6ce57 ^ bytes.length;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    h1 = Math.imul(h1 ^ b, 2654435761);
    h2 = Math.imul(h2 ^ b, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
  return `"${bytes.length.toString(16)}-${hex(h2)}${hex(h1)}"`;
}
