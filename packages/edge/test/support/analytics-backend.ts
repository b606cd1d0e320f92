/**
 * The analytics service the suites query. Until the engine package exports `createEngine` and
 * `serveEngine`, this is a small server answering from the fixtures (the same wire format).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerFromFixtures, type FixtureEvent, fixtureEvents } from './fixtures.ts';

export interface AnalyticsBackend {
  url: string;
  events: FixtureEvent[];
  close(): Promise<void>;
}

export async function startAnalyticsBackend(apiKey: string): Promise<AnalyticsBackend> {
  const events = fixtureEvents(Math.floor(Date.now() / 1000));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (body.api_key !== apiKey) return send(400, { error: 'Invalid API KEY' });
      const answer = answerFromFixtures(events, body, Math.floor(Date.now() / 1000)) as Record<
        string,
        unknown
      >;
      send('error' in answer ? 400 : 200, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    events,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
