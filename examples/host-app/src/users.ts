import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { Tenant } from './dashboard-queries.ts';

/** A user of the host app as its pages and sessions know them. */
export interface HostUser {
  /** What the user types to sign in; also the session subject. */
  login: string;
  name: string;
  tenant: Tenant;
}

/** A user to put in the store, with the password to accept. */
export interface NewUser extends HostUser {
  password: string;
}

/** Checks logins; knows only password hashes. */
export interface UserStore {
  /** The user when login and password match, else null (in time that does not depend on which was wrong). */
  verify(login: string, password: string): Promise<HostUser | null>;
}

const KEY_LENGTH = 32;

function hash(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * An in-memory user store with salted scrypt hashes: the demo's stand-in for the host's real
 * user database. Unknown logins still pay for a hash, so timing does not reveal which logins exist.
 */
export async function createUserStore(users: readonly NewUser[]): Promise<UserStore> {
  const records = new Map<string, { user: HostUser; salt: Buffer; key: Buffer }>();
  for (const { password, ...user } of users) {
    const salt = randomBytes(16);
    records.set(user.login.toLowerCase(), { user, salt, key: await hash(password, salt) });
  }
  const decoy = { salt: randomBytes(16), key: randomBytes(KEY_LENGTH) };
  return {
    async verify(login, password) {
      const record = records.get(login.trim().toLowerCase());
      const key = await hash(password, (record ?? decoy).salt);
      const match = timingSafeEqual(key, (record ?? decoy).key);
      return match && record ? record.user : null;
    },
  };
}

/** The demo's users: one per tenant. Their password is the demo password printed at start. */
export function demoUsers(password: string): NewUser[] {
  return [
    { login: 'alice@acme', name: 'Alice', tenant: 'acme', password },
    { login: 'bob@globex', name: 'Bob', tenant: 'globex', password },
  ];
}
