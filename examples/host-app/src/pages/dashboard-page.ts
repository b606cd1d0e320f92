import type { RangeOption } from '@analytics-chart/edge';
import { html } from 'hono/html';
import type { HostUser } from '../users.ts';
import { layout } from './layout.ts';

/** One chart as the page renders it: an id minted for this viewer and how to lay it out. */
export interface RenderedChart {
  queryId: string;
  /** The registry name (a stable hook for styling and tests). */
  name: string;
  size: 'kpi' | 'half' | 'wide';
  height: number;
  /** The range keys this chart's definition allows. */
  ranges: readonly string[];
}

/** Everything the dashboard page needs. */
export interface DashboardPageOptions {
  user: HostUser;
  charts: readonly RenderedChart[];
  /** The range picker's options and the one chosen. */
  ranges: Readonly<Record<string, RangeOption>>;
  range: string;
  /** URL of the element bundle (the edge serves it, content-hashed). */
  bundleSrc: string;
  /** The edge's embed studio, when it has one: linked from the header. */
  studioHref?: string;
}

const TENANT_NAMES: Record<string, string> = { acme: 'Acme Inc.', globex: 'Globex Corp.' };

/**
 * The dashboard: a header with the tenant, a time-range picker (a GET form that works without
 * script; `/assets/dashboard.js` switches charts in place) and a grid of `<analytics-chart>`
 * elements, each with an id minted on the server for this session. Charts refresh every minute
 * while visible, so a dashboard left open stays live and renews its ids as they expire.
 */
export function dashboardPage(options: DashboardPageOptions) {
  const { user, range } = options;
  const tenant = TENANT_NAMES[user.tenant] ?? user.tenant;
  const body = html`<header class="topbar">
    <h1 class="brand"><span class="logo" aria-hidden="true"></span><span>${tenant}</span><span class="muted">Analytics</span></h1>
    <form class="range-picker" method="get" action="/dashboard">
      <label>Time range
        <select name="range">
          ${Object.entries(options.ranges).map(
            ([key, option]) =>
              html`<option value="${key}" ${key === range ? 'selected' : ''}>${option.label}</option>`,
          )}
        </select>
      </label>
      <button type="submit" class="secondary">Apply</button>
    </form>
    ${options.studioHref ? html`<a class="studio-link" href="${options.studioHref}">Publish a chart</a>` : ''}
    <form class="account" method="post" action="/logout">
      <span class="muted">${user.name} · ${user.login}</span>
      <button type="submit" class="secondary">Sign out</button>
    </form>
  </header>
  <p class="session-ended" role="alert" hidden>Your session has ended. <a href="/login">Sign in again</a> to keep the charts live.</p>
  <main class="dashboard">
    ${options.charts.map(
      (chart) =>
        html`<analytics-chart
      class="chart ${chart.size}"
      data-query="${chart.name}"
      data-ranges="${chart.ranges.join(' ')}"
      query-id="${chart.queryId}"
      ${chart.ranges.includes(range) ? html`range="${range}"` : ''}
      height="${chart.height}"
      refresh="60"
      locale="en-US"
    ></analytics-chart>\n`,
    )}
  </main>
  <footer class="muted">Each chart's id is minted for ${user.login} and ${user.tenant} only, and renewed without a reload when it expires.</footer>`;
  return layout({
    title: `${tenant} · Analytics`,
    body,
    scripts: [options.bundleSrc, '/assets/dashboard.js'],
    bodyClass: 'dashboard-body',
  });
}
