/**
 * What sign accepts, every backend can run: a value one backend cannot carry exactly is refused
 * when the id is minted (a signer parameter: 400; a session value: 403), not answered 502 on
 * every later view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEdge } from '../src/adapter/node/serve-edge.ts';
import { createEdge } from '../src/create-edge.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

let served: { url: string; close(): Promise<void> };

beforeAll(async () => {
  const edge = createEdge({
    signingKeys: [generateSigningKey()],
    backend: { query: async () => ({ result: [{ n: 1 }], metadata: {} }) },
    queries: {
      since: {
        query: {
          graph_type: 'Single Value',
          sql_query:
            "SELECT 'n' AS k, count(*) AS n FROM all_events WHERE tenant = {tenant:String} AND label = {label:String} AND timestamp > {from:DateTime}",
          label_column: 'k',
          value_column: 'n',
        },
        params: {
          tenant: { from: 'session' },
          label: { from: 'signer', type: 'string' },
          from: { from: 'signer', type: 'number' },
        },
      },
    },
    authorize: (c) => {
      const tenant = c.req.header('x-tenant');
      return tenant === undefined ? null : { subject: 'ann', tenant };
    },
    log: () => {},
  });
  served = await serveEdge(edge, { port: 0, hostname: '127.0.0.1' });
});

afterAll(() => served.close());

const sign = (tenant: string, params: Record<string, unknown>) =>
  fetch(`${served.url}/api/sign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tenant': tenant },
    body: JSON.stringify({ query: 'since', params }),
  });

describe('sign refuses what no backend can run exactly', () => {
  it('signs a value every backend carries', async () => {
    expect((await sign('acme', { label: "it's fine", from: 0 })).status).toBe(200);
    expect((await sign('acme', { label: 'x', from: 4_294_967_295 })).status).toBe(200);
  });

  it.each([
    [{ label: 'a\\b', from: 0 }, /backslash or NUL/],
    [{ label: 'a\u0000b', from: 0 }, /backslash or NUL/],
    [{ label: 'x', from: 1e15 }, /outside 1970-01-01 to 2106-02-07/],
    [{ label: 'x', from: -1 }, /outside 1970-01-01 to 2106-02-07/],
    [{ label: 'x', from: 4_294_967_296 }, /outside 1970-01-01 to 2106-02-07/],
  ])('a signer value %j is a 400', async (params, message) => {
    const res = await sign('acme', params);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(message);
  });

  it('a session value that cannot be carried is a 403, and no id', async () => {
    const res = await sign('ac\\me', { label: 'x', from: 0 });
    expect(res.status).toBe(403);
    expect(await res.json()).not.toHaveProperty('id');
  });
});
