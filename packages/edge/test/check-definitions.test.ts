import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../src/backend/backend.ts';
import { engineBackend } from '../src/backend/engine-backend.ts';
import { httpBackend } from '../src/backend/http-backend.ts';
import { checkDefinitions } from '../src/registry/check-definitions.ts';
import { compileRegistry } from '../src/registry/compile-definition.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './support/analytics-backend.ts';

/**
 * `checkDefinitions` against the real engine, over HTTP and in process: the fixture events live
 * in `all_events`, so a definition reading `events` (as a README once told users to write) is
 * what the check exists to catch.
 */

const API_KEY = 'check-definitions-key';
let service: AnalyticsBackend;

beforeAll(async () => {
  service = await startAnalyticsBackend(API_KEY);
});
afterAll(() => service.close());

const week = { start: '7 days ago', end: 'now' };
const registry = () =>
  compileRegistry({
    fine: { query: { graph_type: 'Single Line', ...week, filters: [['tenant', '=', 'acme']] } },
    wrongCollection: { query: { collection: 'events', graph_type: 'Single Value', ...week } },
    nestedField: {
      query: { graph_type: 'Pie Chart', split: 'user.plan', ...week },
      params: { tenant: { from: 'session' } },
    },
    misspelled: {
      query: {
        graph_type: 'Single Value',
        ...week,
        aggregation: 'Sum',
        metric: 'pricee',
        filters: [['tenant', '=', { $param: 'tenant' }]],
      },
      params: { tenant: { from: 'session' } },
    },
    refused: {
      query: {
        sql_query: 'SELECT no_such_column AS n FROM all_events',
        graph_type: 'Single Value',
        label_column: 'n',
        value_column: 'n',
      },
    },
  });

describe.each([
  ['over HTTP', () => httpBackend({ baseUrl: service.url, apiKey: API_KEY, retries: 0 })],
  ['in process', () => engineBackend(service.engine, { apiKey: API_KEY })],
] as Array<[string, () => Backend]>)('checkDefinitions %s', (_, backend) => {
  it('names a collection the workspace lacks, a refused query and a field no event has', async () => {
    const findings = await checkDefinitions(registry(), backend());
    const byQuery: Record<string, typeof findings> = {};
    for (const f of findings) byQuery[f.query ?? ''] = [...(byQuery[f.query ?? ''] ?? []), f];
    expect(Object.keys(byQuery).sort()).toEqual(['misspelled', 'refused', 'wrongCollection']);
    expect(byQuery.wrongCollection).toEqual([
      {
        query: 'wrongCollection',
        level: 'error',
        message: expect.stringMatching(
          /^reads collection 'events', which the workspace does not have \(it has: all_events\)/,
        ),
      },
    ]);
    expect(byQuery.refused).toEqual([
      {
        query: 'refused',
        level: 'error',
        message: expect.stringMatching(/^the service refused it: /),
      },
    ]);
    // The tenant filter's field exists; only the misspelled metric is reported.
    expect(byQuery.misspelled).toEqual([
      {
        query: 'misspelled',
        level: 'warning',
        message: expect.stringContaining("has the field 'pricee'"),
      },
    ]);
  });

  it('stops at one sentence when the key is wrong, and never repeats the key', async () => {
    const wrong =
      _ === 'over HTTP'
        ? httpBackend({ baseUrl: service.url, apiKey: 'not-the-key', retries: 0 })
        : engineBackend(service.engine, { apiKey: 'not-the-key' });
    const findings = await checkDefinitions(registry(), wrong);
    expect(findings).toEqual([
      {
        level: 'error',
        message: expect.stringContaining('refused the workspace key (Invalid API KEY)'),
      },
    ]);
    expect(JSON.stringify(findings)).not.toContain('not-the-key');
  });
});

describe('checkDefinitions without a collections call', () => {
  it('says the names went unchecked, and still runs each definition', async () => {
    const http = httpBackend({ baseUrl: service.url, apiKey: API_KEY, retries: 0 });
    const ran: unknown[] = [];
    const bare: Backend = {
      query(body, signal) {
        ran.push(body);
        return http.query(body, signal);
      },
    };
    const findings = await checkDefinitions(registry(), bare, { fields: false });
    expect(findings.filter((f) => f.query === undefined)).toEqual([
      { level: 'warning', message: expect.stringContaining('collection names were not checked') },
    ]);
    // Five definitions, one range each; the wrong collection runs (and draws nothing).
    expect(ran).toHaveLength(5);
    expect(findings.map((f) => f.query).filter(Boolean)).toEqual(['refused']);
  });
});
