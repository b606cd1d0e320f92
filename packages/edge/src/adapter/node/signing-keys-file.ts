import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  formatSigningKeys,
  generateSigningKey,
  parseSigningKeys,
  type SigningKey,
} from '../../tokens/signing-keys.ts';

/**
 * Reads signing keys from a file holding the `EDGE_SIGNING_KEYS` form (`kid:secret,…`) or JSON
 * (`[{kid, secret}]`). For development: production keys belong in the environment.
 */
export function readSigningKeysFile(path: string): SigningKey[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new Error(`cannot read the signing keys file ${path}`);
  }
  return parseSigningKeys(text, path);
}

/**
 * The development key file: read it, or create it with one fresh key (mode 0600) when missing.
 * The demo keeps it under `.data/`, which git ignores.
 */
export function ensureDevSigningKeys(path: string): SigningKey[] {
  if (existsSync(path)) return readSigningKeysFile(path);
  mkdirSync(dirname(path), { recursive: true });
  const keys = [generateSigningKey()];
  writeFileSync(path, `${formatSigningKeys(keys)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return keys;
}
