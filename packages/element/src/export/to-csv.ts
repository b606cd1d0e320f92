import type { DataTable } from '../accessibility/to-data-table.ts';

/**
 * A data table as CSV (RFC 4180, CRLF). Values stay raw so spreadsheets can compute with them:
 * numbers unformatted, Samples timestamps as ISO 8601 UTC, objects as JSON. Text that a spreadsheet
 * would run as a formula gets a leading apostrophe, because event data is written by end users.
 */
export function toCsv(table: DataTable): string {
  const lines = [table.columns.map((c) => csvField(c.name))];
  for (const row of table.rows) {
    lines.push(
      table.columns.map((column, i) => {
        const value = row[i];
        if (column.kind === 'timestamp' && typeof value === 'number') {
          return csvField(new Date(value * 1000).toISOString());
        }
        return csvField(value);
      }),
    );
  }
  return `${lines.map((l) => l.join(',')).join('\r\n')}\r\n`;
}

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
