import { AnalyticsChart } from './analytics-chart.component.ts';

export { AnalyticsChart };

/** The tag name the element registers under. */
export const TAG_NAME = 'analytics-chart';

// A page may load both the CDN bundle and the package; the first definition wins quietly.
if (!customElements.get('analytics-chart'))
  customElements.define('analytics-chart', AnalyticsChart);

declare global {
  interface HTMLElementTagNameMap {
    'analytics-chart': AnalyticsChart;
  }
}
