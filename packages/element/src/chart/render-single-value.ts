import type { ChartPayload } from '@analytics-chart/protocol/chart-payload';
import { html, nothing, type TemplateResult } from 'lit';
import type { ChartFormatters } from './chart-formatters.ts';
import { compareDelta } from './compare-delta.ts';

/**
 * Single Value's view: the number, and its change against the comparison window with the
 * direction spelled out for screen readers beside the arrow.
 */
export function renderSingleValue(payload: ChartPayload, f: ChartFormatters): TemplateResult {
  const delta = compareDelta(payload.value, payload.compareValue);
  let deltaView: TemplateResult | typeof nothing = nothing;
  if (delta) {
    const amount =
      delta.relative === null
        ? f.number(Math.abs(delta.absolute))
        : f.percent(Math.abs(delta.relative));
    const sign = delta.direction === 'up' ? '▲' : delta.direction === 'down' ? '▼' : '●';
    const word =
      delta.direction === 'up' ? 'Up' : delta.direction === 'down' ? 'Down' : 'Unchanged';
    deltaView = html`<div part="delta" class="delta ${delta.direction}">
      <span aria-hidden="true">${sign}</span>
      <span class="visually-hidden">${word}</span>
      ${delta.direction === 'flat' ? nothing : amount}
      <span class="versus">vs ${f.number(payload.compareValue)} in the previous period</span>
    </div>`;
  }
  return html`<div class="value-view">
    <div part="value" class="value">${f.number(payload.value)}</div>
    ${deltaView}
  </div>`;
}
