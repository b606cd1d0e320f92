/**
 * Reads every stored payload of a workspace's `all_events` back through the engine's public
 * SQL mode (`POST /api/visualize/data` with `sql_query`), 2,000 rows a page (the row cap),
 * ordered by the payload text so pages neither overlap nor skip.
 */
import { postJson } from './post-json.ts';

const PAGE = 2000;

/** The payload text of every stored event, in payload order. */
export async function engineEvents(url: string, apiKey: string): Promise<string[]> {
  const ask = async (sql: string) => {
    const answer = await postJson(`${url}/api/visualize/data`, {
      api_key: apiKey,
      graph_type: 'Table',
      sql_query: sql,
    });
    if (answer.status !== 200) {
      throw new Error(`SQL read failed: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
    return answer.body.result as Record<string, unknown>[];
  };
  const [first] = await ask('SELECT count(*) AS n FROM all_events');
  const total = Number(first?.n);
  const rows: string[] = [];
  for (let offset = 0; offset < total; offset += PAGE) {
    const page = await ask(
      `SELECT json FROM all_events ORDER BY json LIMIT ${PAGE} OFFSET ${offset}`,
    );
    for (const row of page) rows.push(String(row.json));
  }
  if (rows.length !== total) {
    throw new Error(`SQL read: count(*) said ${total} but the pages held ${rows.length}`);
  }
  return rows;
}
