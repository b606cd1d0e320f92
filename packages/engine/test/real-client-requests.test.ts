import { afterAll, beforeAll, expect, test } from 'vitest';
import { ingest, startServer, type TestServer } from './helpers/engine-server.ts';

/** Two requests as the hosted service's real clients send them: a grouped Table and Samples paging. */

const KEY = 'K-live-4f1c2e9a';
const NOW = Date.parse('2024-06-01T12:00:00Z') / 1000;
const START = Date.parse('2022-03-14T13:44:00Z') / 1000; // 03/14/2022 1:44 pm in London (GMT)
let server: TestServer;

// Hand-counted: after the start, action_completed events per action_id are
// checkout 12, onboarding 5, invite 1; other events and earlier ones do not count.
const EVENTS = [
  ...Array.from({ length: 12 }, (_, i) => ({
    timestamp: START + 60 + i * 86_400,
    json: { Event: 'action_completed', action_id: 'checkout' },
  })),
  ...Array.from({ length: 5 }, (_, i) => ({
    timestamp: START + 120 + i * 3600,
    json: { Event: 'action_completed', action_id: 'onboarding' },
  })),
  { timestamp: START + 1, json: { Event: 'action_completed', action_id: 'invite' } },
  { timestamp: START, json: { Event: 'action_completed', action_id: 'invite' } }, // at start: excluded
  { timestamp: START - 3600, json: { Event: 'action_completed', action_id: 'checkout' } },
  { timestamp: START + 500, json: { Event: 'action_started', action_id: 'checkout' } },
  { timestamp: START + 600, json: { Event: 'action_completed' } }, // no action_id: left out
].sort((a, b) => a.timestamp - b.timestamp);

beforeAll(async () => {
  // Every body here is small enough to be parsed inline: the engine (and each restart) starts no body workers.
  server = await startServer({ workspaces: { default: KEY }, now: () => NOW, bodyWorkers: 0 });
  for (const e of EVENTS) {
    const r = await server.post('/api/log', { api_key: KEY, collection: 'base', ...e });
    expect(r.status).toBe(200);
  }
});

afterAll(async () => {
  await server?.close();
});

test('a Table request copied from a real client returns rows like {"action_id": "…", "Count": 12}', async () => {
  const answer = await server.post('/api/visualize/data', {
    api_key: KEY,
    aggregation: 'Count',
    collection: 'base',
    compare: null,
    end: 'now',
    filters: [['Event', '=', 'action_completed']],
    graph_type: 'Table',
    IANA_time_zone: 'Europe/London',
    metric: null,
    split: 'action_id',
    start: '03/14/2022 1:44 pm',
  });
  expect(answer.status).toBe(200);
  expect(answer.body.result).toEqual([
    { action_id: 'checkout', Count: 12 },
    { action_id: 'onboarding', Count: 5 },
    { action_id: 'invite', Count: 1 },
  ]);
});

test('a client paging Samples Ascending, 50 at a time, moving start, gets every event and then []', async () => {
  const many = Array.from({ length: 230 }, (_, i) => ({
    timestamp: NOW - 100_000 + Math.floor(i / 4) * 7,
    json: { n: i },
  }));
  await ingest(server, many, 'paged', KEY);
  const seen: number[] = [];
  let start: number | string = '03/14/2022 1:44 pm';
  let last: unknown[] = [];
  for (let call = 0; call < 50; call++) {
    const answer = await server.post('/api/visualize/data', {
      api_key: KEY,
      collection: 'paged',
      graph_type: 'Samples',
      order: 'Ascending',
      start,
      end: 'now',
      IANA_time_zone: 'Europe/London',
    });
    expect(answer.status).toBe(200);
    last = answer.body.result;
    if (last.length === 0) break;
    expect(last.length).toBeLessThanOrEqual(50);
    for (const row of last as Array<{ timestamp: number; json: { n: number } }>)
      seen.push(row.json.n);
    start = (last[last.length - 1] as { timestamp: number }).timestamp;
  }
  expect(last).toEqual([]);
  expect(seen).toEqual(many.map((e) => e.json.n));
});
