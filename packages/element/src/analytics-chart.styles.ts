import { css } from 'lit';

/**
 * The element's styles, adopted as a constructable stylesheet (no inline `<style>`, so a strict CSP
 * needs no `unsafe-inline`). Public `--analytics-chart-*` properties feed private `--_*` ones that
 * carry the light or dark default; the chart reads the private ones with `getComputedStyle`.
 */
export const analyticsChartStyles = css`
  :host {
    /* Set once here: the shadow tree's text and the chart's canvas both read it. */
    --_font: var(
      --analytics-chart-font,
      system-ui,
      -apple-system,
      'Segoe UI',
      Roboto,
      'Helvetica Neue',
      Arial,
      sans-serif
    );
    display: block;
    position: relative;
    font-family: var(--_font);
  }

  :host([hidden]) {
    display: none;
  }

  [hidden] {
    display: none !important;
  }

  .base {
    --_font-size: var(--analytics-chart-font-size, 12px);
    --_background: var(--analytics-chart-background, #ffffff);
    --_text: var(--analytics-chart-text, #1f2328);
    --_muted: var(--analytics-chart-muted, #59636e);
    --_grid: var(--analytics-chart-grid, rgba(31, 35, 40, 0.12));
    --_skeleton: var(--analytics-chart-skeleton, #eaeef2);
    --_positive: var(--analytics-chart-positive, #1a7f37);
    --_negative: var(--analytics-chart-negative, #cf222e);
    --_focus: var(--analytics-chart-focus, #0969da);
    --_color-1: var(--analytics-chart-color-1, #2563eb);
    --_color-2: var(--analytics-chart-color-2, #ea580c);
    --_color-3: var(--analytics-chart-color-3, #16a34a);
    --_color-4: var(--analytics-chart-color-4, #9333ea);
    --_color-5: var(--analytics-chart-color-5, #0891b2);
    --_color-6: var(--analytics-chart-color-6, #db2777);
    --_color-7: var(--analytics-chart-color-7, #a16207);
    --_color-8: var(--analytics-chart-color-8, #4b5563);

    box-sizing: border-box;
    display: flex;
    flex-direction: column;
    gap: 8px;
    padding: var(--analytics-chart-padding, 12px);
    border-radius: var(--analytics-chart-radius, 8px);
    background: var(--_background);
    color: var(--_text);
    font-family: var(--_font);
    font-size: var(--_font-size);
    line-height: 1.4;
  }

  .base[data-theme='dark'] {
    --_background: var(--analytics-chart-background, #0d1117);
    --_text: var(--analytics-chart-text, #e6edf3);
    --_muted: var(--analytics-chart-muted, #9198a1);
    --_grid: var(--analytics-chart-grid, rgba(240, 246, 252, 0.14));
    --_skeleton: var(--analytics-chart-skeleton, #21262d);
    --_positive: var(--analytics-chart-positive, #3fb950);
    --_negative: var(--analytics-chart-negative, #f85149);
    --_focus: var(--analytics-chart-focus, #4493f8);
    --_color-1: var(--analytics-chart-color-1, #60a5fa);
    --_color-2: var(--analytics-chart-color-2, #fb923c);
    --_color-3: var(--analytics-chart-color-3, #4ade80);
    --_color-4: var(--analytics-chart-color-4, #c084fc);
    --_color-5: var(--analytics-chart-color-5, #22d3ee);
    --_color-6: var(--analytics-chart-color-6, #f472b6);
    --_color-7: var(--analytics-chart-color-7, #facc15);
    --_color-8: var(--analytics-chart-color-8, #9ca3af);
  }

  .header {
    display: flex;
    align-items: center;
    gap: 8px;
    min-height: 24px;
  }

  .title {
    flex: 1;
    margin: 0;
    font-size: 1.15em;
    font-weight: 600;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }

  .toolbar {
    display: flex;
    gap: 4px;
    margin-left: auto;
  }

  button {
    font: inherit;
    color: inherit;
    background: transparent;
    border: 1px solid var(--_grid);
    border-radius: 4px;
    padding: 2px 8px;
    cursor: pointer;
  }

  button:hover {
    background: var(--_grid);
  }

  button[aria-pressed='true'] {
    background: var(--_grid);
  }

  :focus-visible {
    outline: 2px solid var(--_focus);
    outline-offset: 2px;
  }

  .body {
    position: relative;
    flex: 1;
    min-height: 0;
  }

  .chart {
    position: relative;
    width: 100%;
    height: 100%;
  }

  canvas {
    display: block;
    border-radius: 2px;
  }

  .state {
    position: absolute;
    inset: 0;
    display: flex;
    flex-direction: column;
    align-items: center;
    justify-content: center;
    gap: 8px;
    text-align: center;
  }

  .message {
    margin: 0;
    color: var(--_muted);
    font-size: 1.1em;
  }

  .skeleton {
    position: absolute;
    inset: 0;
    border-radius: 6px;
    background: linear-gradient(
      90deg,
      var(--_skeleton) 25%,
      color-mix(in srgb, var(--_skeleton) 40%, var(--_background)) 50%,
      var(--_skeleton) 75%
    );
    background-size: 200% 100%;
    animation: shimmer 1.4s linear infinite;
  }

  @keyframes shimmer {
    from {
      background-position: 100% 0;
    }
    to {
      background-position: -100% 0;
    }
  }

  @media (prefers-reduced-motion: reduce) {
    .skeleton {
      animation: none;
    }
  }

  .legend {
    display: flex;
    flex-wrap: wrap;
    gap: 2px 4px;
    margin: 0;
    padding: 0;
    list-style: none;
  }

  .legend button {
    display: inline-flex;
    align-items: center;
    gap: 6px;
    border-color: transparent;
    background: transparent;
  }

  .legend button:hover {
    background: var(--_grid);
  }

  .legend button[aria-pressed='false'] {
    background: transparent;
    color: var(--_muted);
    text-decoration: line-through;
  }

  .legend button[aria-pressed='false'] .swatch {
    opacity: 0.35;
  }

  .swatch {
    display: inline-block;
    flex: none;
    width: 12px;
    height: 12px;
    border-radius: 3px;
    background: var(--_swatch);
  }

  .swatch.dashed {
    height: 0;
    border-radius: 0;
    background: none;
    border-top: 2px dashed var(--_swatch);
  }

  .c1 {
    --_swatch: var(--_color-1);
  }
  .c2 {
    --_swatch: var(--_color-2);
  }
  .c3 {
    --_swatch: var(--_color-3);
  }
  .c4 {
    --_swatch: var(--_color-4);
  }
  .c5 {
    --_swatch: var(--_color-5);
  }
  .c6 {
    --_swatch: var(--_color-6);
  }
  .c7 {
    --_swatch: var(--_color-7);
  }
  .c8 {
    --_swatch: var(--_color-8);
  }

  .tooltip {
    position: absolute;
    top: 0;
    left: 0;
    z-index: 1;
    min-width: 120px;
    max-width: 280px;
    padding: 6px 8px;
    border-radius: 4px;
    background: var(--_text);
    color: var(--_background);
    pointer-events: none;
    box-shadow: 0 2px 8px rgba(0, 0, 0, 0.2);
  }

  .tooltip-title {
    font-weight: 600;
    margin-bottom: 2px;
  }

  .tooltip-row {
    display: flex;
    align-items: center;
    gap: 6px;
  }

  .tooltip-value {
    margin-left: auto;
    padding-left: 12px;
    font-weight: 600;
    font-variant-numeric: tabular-nums;
  }

  .tooltip-note {
    opacity: 0.85;
  }

  .value-view {
    height: 100%;
    display: flex;
    flex-direction: column;
    justify-content: center;
    gap: 4px;
  }

  .value {
    font-size: var(--analytics-chart-value-size, 3.5em);
    font-weight: 650;
    line-height: 1.1;
    font-variant-numeric: tabular-nums;
  }

  .delta {
    font-size: 1.15em;
    font-variant-numeric: tabular-nums;
  }

  .delta.up {
    color: var(--_positive);
  }

  .delta.down {
    color: var(--_negative);
  }

  .delta .versus {
    color: var(--_muted);
  }

  .table-wrap {
    height: 100%;
    overflow: auto;
  }

  table {
    width: 100%;
    border-collapse: collapse;
    font-variant-numeric: tabular-nums;
  }

  th,
  td {
    padding: 4px 8px;
    text-align: left;
    vertical-align: top;
    border-bottom: 1px solid var(--_grid);
  }

  th {
    position: sticky;
    top: 0;
    background: var(--_background);
    font-weight: 600;
  }

  td.number {
    text-align: right;
    white-space: nowrap;
  }

  td.json {
    font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
    word-break: break-all;
  }

  .note {
    margin: 4px 0 0;
    color: var(--_muted);
  }

  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    padding: 0;
    margin: -1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }
`;
