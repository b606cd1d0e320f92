/** Seconds per unit of a lifetime such as `10m` or `30d`. */
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/**
 * Parses a lifetime: `45s`, `10m`, `1h`, `30d`, `2w`, or a number of seconds. Returns null for
 * anything else, zero or negative values, and lifetimes beyond ten years.
 */
export function parseTtl(value: string | number): number | null {
  let seconds: number;
  if (typeof value === 'number') seconds = value;
  else {
    const m = /^\s*(\d{1,9})\s*([smhdw])?\s*$/i.exec(value);
    if (!m) return null;
    seconds = Number(m[1]) * (UNIT_SECONDS[(m[2] ?? 's').toLowerCase()] ?? 1);
  }
  if (!Number.isInteger(seconds) || seconds <= 0 || seconds > 10 * 366 * 86_400) return null;
  return seconds;
}

/** Like {@link parseTtl} but throws a sentence naming the setting. */
export function requireTtl(value: string | number, setting: string): number {
  const seconds = parseTtl(value);
  if (seconds === null) {
    throw new Error(
      `${setting}: '${String(value)}' is not a lifetime; use e.g. 45s, 10m, 1h, 30d or 2w`,
    );
  }
  return seconds;
}
