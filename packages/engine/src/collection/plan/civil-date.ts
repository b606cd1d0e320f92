/**
 * Calendar arithmetic on day numbers (days since 1970-01-01), after Howard Hinnant's
 * `civil_from_days`. Bucket labels are produced from integers this way, which is exact and far
 * cheaper than building a date object per bucket.
 */

/** The proleptic Gregorian date of a day number. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYY-MM-DD` of a day number. */
export function dayLabel(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** `YYYY-MM-DD HH:mm` of a wall-clock reading given as seconds since 1970-01-01 00:00. */
export function minuteLabel(localSeconds: number): string {
  const days = Math.floor(localSeconds / 86_400);
  const rest = localSeconds - days * 86_400;
  return `${dayLabel(days)} ${pad(Math.floor(rest / 3600))}:${pad(Math.floor((rest % 3600) / 60))}`;
}

/** `YYYY-MM` of a month number (`year * 12 + month - 1`). */
export function monthLabel(monthNumber: number): string {
  const year = Math.floor(monthNumber / 12);
  return `${pad(year, 4)}-${pad(monthNumber - year * 12 + 1)}`;
}
