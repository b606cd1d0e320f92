import { createClient } from '@clickhouse/client-web';
import { afterAll, describe, expect, inject, it } from 'vitest';

const url = inject('clickhouseUrl');
const password = inject('clickhousePassword');
const client = createClient({ url, password, database: 'default' });
afterAll(() => client.close());

describe('the chdb-backed ClickHouse HTTP server', () => {
  it('answers ping as ClickHouse does', async () => {
    expect(await client.ping()).toEqual({ success: true });
    const res = await fetch(`${url}/ping`);
    expect(await res.text()).toBe('Ok.\n');
  });

  it('creates a database and a table, inserts JSONEachRow and selects it back', async () => {
    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS wire_a' });
    await client.command({
      query: `CREATE TABLE IF NOT EXISTS wire_a.t (id UInt32, name String, at DateTime64(3, 'UTC'))
              ENGINE = MergeTree ORDER BY id`,
    });
    const rows = [
      { id: 1, name: "it's; a \\ test\n", at: '2024-03-10 07:00:00.250' },
      { id: 2, name: 'ünïcode', at: '2024-03-10 08:00:00.000' },
    ];
    await client.insert({ table: 'wire_a.t', values: rows, format: 'JSONEachRow' });
    const result = await client.query({
      query: 'SELECT id, name, at FROM wire_a.t ORDER BY id',
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual(rows);
    const compact = await client.query({
      query: 'SELECT id, name FROM wire_a.t ORDER BY id',
      format: 'JSONCompactEachRow',
    });
    expect(await compact.json()).toEqual(rows.map((r) => [r.id, r.name]));
  });

  it('takes a large insert whose data follows the statement in the body, as a server streams it', async () => {
    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS wire_b' });
    await client.command({
      query:
        'CREATE TABLE IF NOT EXISTS wire_b.t (id UInt32, name String) ENGINE = MergeTree ORDER BY id',
    });
    // Over 1 MiB, with characters of two to four bytes, tabs and newlines escaped as TSV does.
    const names = Array.from(
      { length: 40_000 },
      (_, i) => `ünï ${i} 𝄞 "q" \\t ${'x'.repeat(i % 30)}`,
    );
    const text = names.map((name, i) => `${i}\t${name}`).join('\n');
    expect(Buffer.byteLength(text)).toBeGreaterThan(1 << 20);
    await (
      await client.exec({ query: `INSERT INTO wire_b.t (id, name) FORMAT TabSeparated\n${text}` })
    ).stream.cancel();
    const result = await client.query({
      query:
        'SELECT count() AS n, sum(id) AS s, any(name) AS a, max(length(name)) AS l FROM wire_b.t',
      format: 'JSONEachRow',
    });
    const [row] = (await result.json()) as Array<{ n: string; s: string; l: string }>;
    expect(Number(row?.n)).toBe(names.length);
    expect(Number(row?.s)).toBe((names.length * (names.length - 1)) / 2);
    const last = await client.query({
      query: 'SELECT name FROM wire_b.t WHERE id = {id:UInt32}',
      query_params: { id: names.length - 1 },
      format: 'JSONEachRow',
    });
    expect(await last.json()).toEqual([{ name: (names.at(-1) as string).replace('\\t', '\t') }]);
  });

  it('binds query parameters, never splicing them into the SQL', async () => {
    const tricky = "x' OR 1=1 --\t\\n";
    const result = await client.query({
      query: 'SELECT {s:String} AS s, {n:UInt64} + 1 AS n, {a:Array(String)} AS a',
      query_params: { s: tricky, n: 41, a: ['p', "q'"] },
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ s: tricky, n: '42', a: ['p', "q'"] }]);
  });

  it('applies settings to one query only and echoes the query id', async () => {
    const first = await client.query({
      query: "SELECT getSetting('max_result_rows') AS m",
      format: 'JSONEachRow',
      clickhouse_settings: { max_result_rows: '7', readonly: '1' },
      query_id: 'wire-query-id-1',
    });
    expect(first.query_id).toBe('wire-query-id-1');
    expect(first.response_headers['x-clickhouse-query-id']).toBe('wire-query-id-1');
    expect(await first.json()).toEqual([{ m: 7 }]);
    const after = await client.query({
      query: "SELECT getSetting('max_result_rows') AS m, getSetting('readonly') AS r",
      format: 'JSONEachRow',
    });
    expect(await after.json()).toEqual([{ m: 0, r: 0 }]);
  });

  it('refuses writes under readonly=1 with ClickHouse error code and status', async () => {
    const res = await fetch(`${url}/?readonly=1`, {
      method: 'POST',
      headers: { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': password },
      body: 'CREATE DATABASE wire_refused',
    });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-clickhouse-exception-code')).toBe('164');
    expect(await res.text()).toMatch(/^Code: 164\. DB::Exception: .*\(READONLY\) \(version \d+\./);
    await expect(
      client.command({
        query: 'CREATE DATABASE wire_refused',
        clickhouse_settings: { readonly: '1' },
      }),
    ).rejects.toMatchObject({ code: '164', type: 'READONLY' });
  });

  it('maps exception codes to the statuses ClickHouse uses', async () => {
    const post = (sql: string) =>
      fetch(`${url}/?user=default&password=${password}`, { method: 'POST', body: sql });
    const unknown = await post('SELECT nope FROM system.one');
    expect([unknown.status, unknown.headers.get('x-clickhouse-exception-code')]).toEqual([
      404,
      '47',
    ]);
    const syntax = await post('SELEC 1');
    expect([syntax.status, syntax.headers.get('x-clickhouse-exception-code')]).toEqual([400, '62']);
  });

  it('takes the query from the query parameter and the default format from default_format', async () => {
    const res = await fetch(
      `${url}/?query=${encodeURIComponent('SELECT 1 AS one')}&default_format=JSONEachRow`,
      { headers: { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': password } },
    );
    expect(res.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
    expect(await res.text()).toBe('{"one":1}\n');
  });

  it('refuses several statements in one request, as the server does', async () => {
    await expect(
      client.command({ query: 'SELECT 1; CREATE DATABASE wire_refused_too' }),
    ).rejects.toMatchObject({ code: '62', type: 'SYNTAX_ERROR' });
    const result = await client.query({
      query: "SELECT count() AS c FROM system.databases WHERE name = 'wire_refused_too'",
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ c: '0' }]);
  });

  it('refuses a wrong password as ClickHouse does', async () => {
    const wrong = createClient({ url, password: 'not-it' });
    await expect(wrong.query({ query: 'SELECT 1' })).rejects.toMatchObject({
      code: '516',
      type: 'AUTHENTICATION_FAILED',
    });
    await wrong.close();
  });

  it('compresses responses with gzip when the client asks', async () => {
    const gz = createClient({ url, password, compression: { response: true, request: true } });
    await gz.command({
      query: 'CREATE TABLE IF NOT EXISTS wire_a.gz (n UInt32) ENGINE = MergeTree ORDER BY n',
    });
    await gz.insert({
      table: 'wire_a.gz',
      values: Array.from({ length: 100 }, (_, n) => ({ n })),
      format: 'JSONEachRow',
    });
    const result = await gz.query({
      query: 'SELECT sum(n) AS s FROM wire_a.gz',
      format: 'JSONEachRow',
    });
    expect(result.response_headers['content-encoding']).toBe('gzip');
    expect(await result.json()).toEqual([{ s: String((99 * 100) / 2) }]);
    await gz.close();
  });

  it('deduplicates a retried insert carrying the same insert_deduplication_token', async () => {
    await client.command({
      query: `CREATE TABLE IF NOT EXISTS wire_a.dedup (n UInt32) ENGINE = MergeTree ORDER BY n
              SETTINGS non_replicated_deduplication_window = 100`,
    });
    const send = (token: string) =>
      client.insert({
        table: 'wire_a.dedup',
        values: [{ n: 1 }, { n: 2 }],
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: token },
      });
    await send('batch-1');
    await send('batch-1');
    await send('batch-2');
    const result = await client.query({
      query: 'SELECT count() AS c FROM wire_a.dedup',
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ c: '4' }]);
  });
});
