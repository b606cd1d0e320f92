import { createHmac } from 'node:crypto';

/**
 * A host app's session cookie value: an HS256 JWT over `claims` with `secret`, written here with
 * node:crypto alone so the edge's verification is checked against an independent signer.
 */
export function sessionJwt(claims: Record<string, unknown>, secret: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
