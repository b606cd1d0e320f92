/** Locale-aware formatting of a payload's numbers, bucket labels and timestamps, built once per draw. */
export interface ChartFormatters {
  locale: string;
  /** A value in full precision for tooltips, tables and the big number. */
  number(value: number | null | undefined): string;
  /** A value on an axis: compact (`1.2K`). */
  axisNumber(value: number): string;
  /** A fraction as a percentage (`0.125` → `12.5%`). */
  percent(value: number | null | undefined): string;
  /** A bucket label, short, for an axis tick (`Mar 5`, `14:00`). */
  shortLabel(label: string): string;
  /** A bucket label in full, for tooltips and tables (`Mar 5, 2024`). */
  longLabel(label: string): string;
  /** Unix seconds as a date and time in the payload's zone (Samples). */
  timestamp(seconds: number): string;
  /** Unix seconds as a date and minute in the payload's zone (the range in summaries). */
  instant(seconds: number): string;
}

const BUCKET_LABEL = /^(\d{4})-(\d{2})(?:-(\d{2})(?:[ T](\d{2}):(\d{2}))?)?$/;

/** The parts of a bucket label (`2024-03`, `2024-03-05`, `2024-03-05 14:00`), or null for a category. */
export function parseBucketLabel(
  label: string,
): { date: Date; precision: 'month' | 'day' | 'minute' } | null {
  const m = BUCKET_LABEL.exec(label);
  if (!m) return null;
  const [, y, mo, d, h, mi] = m;
  const date = new Date(
    Date.UTC(Number(y), Number(mo) - 1, d ? Number(d) : 1, h ? Number(h) : 0, mi ? Number(mi) : 0),
  );
  return { date, precision: h ? 'minute' : d ? 'day' : 'month' };
}

const NO_VALUE = '–';

// Every cache has a bound: a page draws in a handful of locale and zone pairs, so the oldest goes.
const CACHE_LIMIT = 16;
const cache = new Map<string, ChartFormatters>();

/**
 * Builds the formatters for one payload. Bucket labels are already wall-clock times in the payload's
 * zone, so they are read as UTC and formatted in UTC: no second zone conversion can shift them.
 * Samples timestamps are instants, formatted in the payload's zone.
 */
export function createFormatters(locale: string, timeZone: string): ChartFormatters {
  // Intl objects are slow to build and immutable: one set per locale and zone for the page.
  const key = `${locale}\n${timeZone}`;
  let formatters = cache.get(key);
  if (!formatters) {
    formatters = buildFormatters(locale, timeZone);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(key, formatters);
  }
  return formatters;
}

function buildFormatters(locale: string, timeZone: string): ChartFormatters {
  const full = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
  const compact = new Intl.NumberFormat(locale, {
    notation: 'compact',
    maximumFractionDigits: 1,
  });
  const pct = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 });
  const utc = (options: Intl.DateTimeFormatOptions) =>
    new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' });
  const short = {
    month: utc({ month: 'short', year: 'numeric' }),
    day: utc({ month: 'short', day: 'numeric' }),
    minute: utc({ month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' }),
  };
  const long = {
    month: utc({ month: 'long', year: 'numeric' }),
    day: utc({ dateStyle: 'medium' }),
    minute: utc({ dateStyle: 'medium', timeStyle: 'short' }),
  };
  const zoned = inZone(locale, timeZone, { dateStyle: 'medium', timeStyle: 'medium' });
  const zonedMinute = inZone(locale, timeZone, { dateStyle: 'medium', timeStyle: 'short' });
  const label = (table: Record<'month' | 'day' | 'minute', Intl.DateTimeFormat>) => (l: string) => {
    const parsed = parseBucketLabel(l);
    return parsed ? table[parsed.precision].format(parsed.date) : l;
  };
  return {
    locale: full.resolvedOptions().locale,
    number: (v) => (v === null || v === undefined || Number.isNaN(v) ? NO_VALUE : full.format(v)),
    axisNumber: (v) => compact.format(v),
    percent: (v) => (v === null || v === undefined || Number.isNaN(v) ? NO_VALUE : pct.format(v)),
    shortLabel: label(short),
    longLabel: label(long),
    timestamp: (s) => zoned.format(new Date(s * 1000)),
    instant: (s) => zonedMinute.format(new Date(s * 1000)),
  };
}

function inZone(
  locale: string,
  timeZone: string,
  options: Intl.DateTimeFormatOptions,
): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat(locale, { ...options, timeZone });
  } catch {
    // An unknown zone must not break the chart; the viewer's zone is the next best reading.
    return new Intl.DateTimeFormat(locale, options);
  }
}

/** The locale to format with: the attribute, else the nearest `lang` in the page, else the browser's. */
export function resolveLocale(attribute: string | undefined, element: Element): string {
  const wanted = attribute || element.closest('[lang]')?.getAttribute('lang') || navigator.language;
  try {
    return Intl.NumberFormat.supportedLocalesOf(wanted).length ? wanted : navigator.language;
  } catch {
    return navigator.language;
  }
}
