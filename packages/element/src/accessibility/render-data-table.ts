import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import { html, nothing, type TemplateResult } from 'lit';
import type { ChartFormatters } from '../chart/chart-formatters.ts';
import { formatCell, toDataTable } from './to-data-table.ts';

/** Rows the table view renders at most; the CSV export always has all of them. */
const TABLE_ROW_LIMIT = 1000;

/**
 * The data as an HTML table: the view of Table and Samples, and the table view of any chart,
 * which gives screen reader and keyboard users every value the canvas shows.
 */
export function renderDataTable(payload: ChartPayload, f: ChartFormatters): TemplateResult {
  const table = toDataTable(payload);
  const rows = table.rows.slice(0, TABLE_ROW_LIMIT);
  const caption = payload.title || `${payload.graph} data`;
  const cut = table.rows.length - rows.length;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${caption}>
    <table part="table">
      <caption class="visually-hidden">${caption}</caption>
      <thead>
        <tr>
          ${table.columns.map((c) => html`<th scope="col">${c.name}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (row) => html`<tr>
            ${table.columns.map((c, i) => {
              const value = row[i];
              const kind =
                typeof value === 'number' && c.kind !== 'label' && c.kind !== 'timestamp'
                  ? 'number'
                  : typeof value === 'object' && value !== null
                    ? 'json'
                    : '';
              return html`<td class=${kind}>${formatCell(value, c.kind, f)}</td>`;
            })}
          </tr>`,
        )}
      </tbody>
    </table>
    ${
      cut > 0
        ? html`<p class="note">Showing the first ${rows.length} of ${table.rows.length} rows; the CSV export has all.</p>`
        : payload.truncated
          ? html`<p class="note">The result was cut at ${table.rows.length} rows.</p>`
          : nothing
    }
  </div>`;
}
