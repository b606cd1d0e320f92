import type { ResolvedGranularity } from '@analytics-chart/protocol';

/**
 * The test oracle's own reading of a zone's wall clock: what `Intl.DateTimeFormat` shows at a
 * second, and the rows a time series has when one walks that clock through a window. It shares
 * nothing with the engine's bucketing (no offset tables, no Temporal): rows come from the labels
 * the clock displays, second by second in effect, visiting only the seconds where they can change.
 */

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/** What the zone's clock shows at a Unix second. */
export interface WallReading {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** The reading as seconds since 1970-01-01 00:00 on the same clock. */
  seconds: number;
}

export function wallAt(seconds: number, zone: string): WallReading {
  const format = formatOf(zone);
  // The formatted text read back is several times cheaper than formatToParts; any text not of
  // the shape en-US gives (M/D/YYYY, HH:MM:SS) is read through the parts instead.
  const text = SHOWN.exec(format.format(seconds * 1000));
  let year: number;
  let month: number;
  let day: number;
  let hour: number;
  let minute: number;
  let second: number;
  if (text) {
    [month, day, year, hour, minute, second] = text.slice(1).map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
  } else {
    const parts: Record<string, number> = {};
    for (const part of format.formatToParts(new Date(seconds * 1000))) {
      if (part.type !== 'literal') parts[part.type] = Number(part.value);
    }
    ({ year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, 0);
  return { year, month, day, hour, minute, second, seconds: utc.getTime() / 1000 };
}

const SHOWN = /^(\d{1,2})\/(\d{1,2})\/(\d{4}), (\d{2}):(\d{2}):(\d{2})$/;

const offsetAt = (seconds: number, zone: string) => wallAt(seconds, zone).seconds - seconds;

/**
 * The seconds in `first`…`last` where the zone's offset changes (the first second of the new
 * offset), found by reading the clock every half hour and bisecting where it moved.
 */
export function offsetChanges(zone: string, first: number, last: number): number[] {
  const STEP = 1800;
  const out: number[] = [];
  let t = first;
  let offset = offsetAt(t, zone);
  while (t < last) {
    const next = Math.min(last, t + STEP);
    const nextOffset = offsetAt(next, zone);
    if (nextOffset !== offset) {
      let a = t;
      let b = next;
      while (b - a > 1) {
        const mid = Math.floor((a + b) / 2);
        if (offsetAt(mid, zone) === offset) a = mid;
        else b = mid;
      }
      out.push(b);
    }
    t = next;
    offset = nextOffset;
  }
  return out;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const dateText = (r: { year: number; month: number; day: number }) =>
  `${pad(r.year, 4)}-${pad(r.month)}-${pad(r.day)}`;

/** The label of the bucket a clock reading falls in (weeks start on Monday). */
export function wallLabel(r: WallReading, g: ResolvedGranularity): string {
  switch (g) {
    case 'Minute':
      return `${dateText(r)} ${pad(r.hour)}:${pad(r.minute)}`;
    case 'Hour':
      return `${dateText(r)} ${pad(r.hour)}:00`;
    case 'Day':
      return dateText(r);
    case 'Week': {
      const date = new Date(0);
      date.setUTCFullYear(r.year, r.month - 1, r.day);
      date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
      return dateText({
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
      });
    }
    case 'Month':
      return `${pad(r.year, 4)}-${pad(r.month)}`;
  }
}

/** One row of a series: its label and the first second that falls in it. */
export interface WallRow {
  start: number;
  label: string;
}

const WIDTH: Record<ResolvedGranularity, number> = {
  Minute: 60,
  Hour: 3600,
  Day: 86_400,
  Week: 86_400,
  Month: 86_400,
};

/**
 * The rows of a series over the seconds `first`…`last`. Minute and Hour: walking the seconds,
 * a row begins where the clock shows another minute (hour) or is set back, so a repeated hour
 * is two rows with one label. Day, Week and Month: one row per calendar unit the clock shows at
 * some second of the window, in calendar order. `rowOf` gives an event's row index.
 */
export function wallRows(
  zone: string,
  g: ResolvedGranularity,
  first: number,
  last: number,
): { rows: WallRow[]; rowOf: (seconds: number) => number } {
  if (first > last) return { rows: [], rowOf: () => -1 };
  const clock = g === 'Minute' || g === 'Hour';
  // The seconds where the shown label can change: the clock's unit starts and, for minutes and
  // hours, offset changes (a day's step lands in the next day whatever the clock did meanwhile).
  const changes = clock ? offsetChanges(zone, first, last) : [];
  const pieces: WallRow[] = [];
  const width = WIDTH[g];
  let t = first;
  let c = 0;
  while (t <= last) {
    const r = wallAt(t, zone);
    pieces.push({ start: t, label: wallLabel(r, g) });
    const toUnitEnd = width - (((r.seconds % width) + width) % width);
    while ((changes[c] ?? Number.POSITIVE_INFINITY) <= t) c++;
    t = Math.min(t + toUnitEnd, changes[c] ?? Number.POSITIVE_INFINITY);
  }
  if (clock) {
    const rows: WallRow[] = [];
    for (const piece of pieces) {
      const previous = rows[rows.length - 1];
      const setBack =
        previous !== undefined &&
        changes.includes(piece.start) &&
        wallAt(piece.start, zone).seconds <= wallAt(piece.start - 1, zone).seconds;
      if (previous?.label !== piece.label || setBack) rows.push(piece);
    }
    return {
      rows,
      rowOf: (seconds) => {
        if (seconds < first || seconds > last) return -1;
        let lo = 0;
        let hi = rows.length - 1;
        while (lo < hi) {
          const mid = Math.ceil((lo + hi) / 2);
          if ((rows[mid] as WallRow).start <= seconds) lo = mid;
          else hi = mid - 1;
        }
        return lo;
      },
    };
  }
  const labels = [...new Set(pieces.map((p) => p.label))].sort();
  const rows = labels.map((label) => ({
    label,
    start: pieces.find((p) => p.label === label)?.start ?? first,
  }));
  return {
    rows,
    rowOf: (seconds) =>
      seconds < first || seconds > last ? -1 : labels.indexOf(wallLabel(wallAt(seconds, zone), g)),
  };
}
