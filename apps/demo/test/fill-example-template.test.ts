import { describe, expect, it } from 'vitest';
import { fillExampleTemplate, signRequests } from '../src/examples-site/fill-example-template.ts';

describe('fillExampleTemplate', () => {
  const template = `<!-- {{edge}} is the edge; each {{sign …}} a public id -->
<script type="module" src="{{edge}}/analytics-chart.js"></script>
<analytics-chart query-id="{{sign public-events tenant=acme}}"></analytics-chart>
<analytics-chart query-id="{{ sign public-signups  tenant=globex }}"></analytics-chart>`;

  it('finds each sign placeholder with its parameters and skips prose', () => {
    expect(signRequests(template)).toEqual([
      { query: 'public-events', params: { tenant: 'acme' } },
      { query: 'public-signups', params: { tenant: 'globex' } },
    ]);
  });

  it('fills the edge URL and one minted id per placeholder, in order, escaped', async () => {
    let n = 0;
    const filled = await fillExampleTemplate(
      template,
      'https://edge.example/analytics/',
      async (r) => {
        n++;
        return `id-${r.query}-${r.params.tenant}"<`;
      },
    );
    expect(n).toBe(2);
    expect(filled).toContain('src="https://edge.example/analytics/analytics-chart.js"');
    expect(filled).toContain('query-id="id-public-events-acme&quot;&lt;"');
    expect(filled).toContain('query-id="id-public-signups-globex&quot;&lt;"');
    expect(filled).toContain('each {{sign …}} a public id');
    expect(filled).not.toContain('{{edge}}');
  });

  it('names a malformed parameter', () => {
    expect(() => signRequests('{{sign public-events tenant}}')).toThrow(
      /'tenant' is not name=value/,
    );
  });
});
