/** The zone used when a request names none, as the hosted service does. */
export const DEFAULT_TIME_ZONE = 'America/Los_Angeles';

const known = new Map<string, boolean>();

/**
 * Whether `name` is a time zone this runtime knows. `Intl` carries the IANA database in every
 * runtime we target (Node, Workers, browsers), so it is the source of truth; answers are cached
 * (at most 1,000 names) because building a formatter to ask is slow next to a map lookup.
 */
export function isValidTimeZone(name: string): boolean {
  let ok = known.get(name);
  if (ok === undefined) {
    ok = name.trim() === name && name.length > 0 && name.length <= 64;
    if (ok) {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: name });
      } catch {
        ok = false;
      }
    }
    if (known.size < 1000) known.set(name, ok);
  }
  return ok;
}
