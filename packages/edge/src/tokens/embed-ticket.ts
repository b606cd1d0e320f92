import type { Keyring } from './keyring.ts';

/**
 * How long an embed page's ticket admits its data requests: the page fetches at once (and on a
 * viewer's range change), so minutes suffice, and a scraped ticket is worth little.
 */
export const EMBED_TICKET_SECONDS = 600;

/** Longest ticket read at all: kid, expiry, nonce and MAC with room to spare. */
const MAX_TICKET_LENGTH = 200;

/** Why a ticket was refused, for the log; the viewer's sentence depends only on `expired`. */
export type TicketRefusal = 'missing' | 'malformed' | 'expired' | 'unknown key' | 'bad signature';

/**
 * Short-lived tickets the embed page hands its own data request, so that request may come from a
 * sandboxed frame (`Origin: null`): the page was framed only where `frame-ancestors` allowed, and
 * the ticket proves the data request belongs to such a page load. Stateless (every replica with
 * the same signing keys checks it), signed with the current signing key under its own label.
 */
export interface EmbedTickets {
  /** A ticket for one id (`jti`) asked from one client address, valid for `EMBED_TICKET_SECONDS`. */
  mint(jti: string, address: string | undefined, nowMs: number): Promise<string>;
  /** Null when `ticket` admits `jti` from `address` at `nowMs`, else why not. */
  check(
    ticket: string | undefined,
    jti: string,
    address: string | undefined,
    nowMs: number,
  ): Promise<TicketRefusal | null>;
}

const encoder = new TextEncoder();

/** What the MAC covers, under a label no query id's signing input can start with. */
function signingInput(kid: string, exp: number, nonce: string, jti: string, address?: string) {
  return encoder.encode(
    `analytics-edge embed ticket v1\n${kid}\n${exp}\n${nonce}\n${jti}\n${address ?? 'unknown'}`,
  );
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * Tickets signed with `keyring`'s keys: `<kid>~<exp>~<nonce>~<mac>`, all URL-safe (`~` appears in
 * none of the parts; a kid may hold dots), where `exp` is
 * Unix seconds in base 36 and the MAC (HMAC-SHA-256, checked by WebCrypto in constant time)
 * covers the kid, expiry, nonce, the id's `jti` and the client address.
 */
export function embedTickets(
  keyring: Keyring,
  lifetimeSeconds = EMBED_TICKET_SECONDS,
): EmbedTickets {
  return {
    async mint(jti, address, nowMs) {
      const kid = keyring.currentKid;
      const key = keyring.get(kid);
      if (!key) throw new Error('no current signing key');
      const exp = Math.floor(nowMs / 1000) + lifetimeSeconds;
      const nonce = base64url(crypto.getRandomValues(new Uint8Array(9)));
      const mac = new Uint8Array(
        await crypto.subtle.sign('HMAC', await key, signingInput(kid, exp, nonce, jti, address)),
      );
      return [kid, exp.toString(36), nonce, base64url(mac)].join('~');
    },
    async check(ticket, jti, address, nowMs) {
      if (ticket === undefined || ticket === '') return 'missing';
      if (ticket.length > MAX_TICKET_LENGTH) return 'malformed';
      const fields = ticket.split('~');
      if (fields.length !== 4) return 'malformed';
      const [kid = '', rawExp = '', nonce = '', rawMac = ''] = fields;
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(kid)) return 'malformed';
      if (!/^[0-9a-z]{1,10}$/.test(rawExp) || !/^[A-Za-z0-9_-]{1,32}$/.test(nonce)) {
        return 'malformed';
      }
      const mac = fromBase64url(rawMac);
      if (mac?.length !== 32) return 'malformed';
      const exp = Number.parseInt(rawExp, 36);
      const key = keyring.get(kid);
      if (!key) return 'unknown key';
      const good = await crypto.subtle.verify(
        'HMAC',
        await key,
        mac,
        signingInput(kid, exp, nonce, jti, address),
      );
      if (!good) return 'bad signature';
      // Checked after the MAC, so a forged ticket is never told it is merely old.
      if (exp <= Math.floor(nowMs / 1000)) return 'expired';
      return null;
    },
  };
}
