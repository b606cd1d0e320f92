import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Session } from 'chdb';

/**
 * A single-node ClickHouse HTTP interface for tests, executing with ClickHouse itself as a
 * library (`chdb`). It speaks the wire format that `@clickhouse/client(-web)` and `curl` use against a
 * real server: the query in the body or the `query` parameter (for an INSERT, the `query`
 * parameter and the data in the body), `database`, `query_id`, `param_<name>` bound values, any
 * other parameter as a setting of that query only, `FORMAT` clauses (default TabSeparated), gzip
 * both ways, `X-ClickHouse-*` headers, and errors as ClickHouse sends them: the exception text as
 * the body, `X-ClickHouse-Exception-Code`, and the status ClickHouse maps the code to.
 *
 * It is not a ClickHouse server: no cluster, replication or Distributed tables, no HTTP sessions
 * (`session_id`), no users or grants beyond one user and password checked here, and queries run
 * one at a time. What it proves is that the engine's SQL, settings and inserts are accepted and
 * answered by real ClickHouse code through the production client.
 */

/**
 * chdb's own binding code serializes JavaScript values into parameter text; the HTTP interface
 * receives that text already (`param_<name>`, escaped as the declared type expects), so it goes
 * to the native call unchanged, as a ClickHouse server hands it to its parser.
 */
interface NativeBinding {
  QueryAsyncConnection(
    connection: unknown,
    sql: string,
    format: string,
    params?: Record<string, string>,
  ): Promise<{ bytes: Uint8Array; rowsRead: number; bytesRead: number }>;
}
const require = createRequire(import.meta.url);
const native = createRequire(require.resolve('chdb'))(
  './dist/loader.js',
).loadNative() as NativeBinding;

/** A running server. */
export interface ChdbHttpServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The ClickHouse version executing the queries. */
  version: string;
  close(): Promise<void>;
}

/** How the server is started. */
export interface ChdbHttpServerOptions {
  /** The chdb data directory (one per process; chdb refuses a second one). */
  path: string;
  /** The only user accepted (default `default`). */
  user?: string;
  /** That user's password (default empty). */
  password?: string;
}

// URL parameters of the HTTP interface that are not settings.
const NOT_SETTINGS = new Set([
  'query',
  'database',
  'query_id',
  'default_format',
  'user',
  'password',
  'quota_key',
  'role',
  'session_id',
  'session_timeout',
  'session_check',
  'compress',
  'decompress',
  'buffer_size',
  'wait_end_of_query',
  'enable_http_compression',
]);

/**
 * Settings whose defaults differ between clickhouse-local (which chdb embeds) and the server's
 * HTTP interface: the server quotes 64-bit integers in JSON formats.
 */
const SERVER_DEFAULTS: Array<[string, string]> = [['output_format_json_quote_64bit_integers', '1']];

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FORMAT_CLAUSE = /\bFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$/i;
const INSERT_FORMAT = /^\s*INSERT\s[\s\S]*?\bFORMAT\s+([A-Za-z0-9_]+)\s*$/i;

/** Exception names → the status ClickHouse's HTTP handler answers (its exceptionCodeToHTTPStatus). */
const STATUS_OF: Record<string, number> = {
  REQUIRED_PASSWORD: 401,
  UNKNOWN_USER: 403,
  WRONG_PASSWORD: 403,
  AUTHENTICATION_FAILED: 403,
  SET_NON_GRANTED_ROLE: 403,
  ACCESS_DENIED: 403,
  QUERY_IS_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  SOCKET_TIMEOUT: 503,
  CANNOT_OPEN_FILE: 503,
  CANNOT_SCHEDULE_TASK: 503,
  HTTP_LENGTH_REQUIRED: 411,
  TIMEOUT_EXCEEDED: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
};
for (const name of [
  'BAD_ARGUMENTS',
  'CANNOT_COMPILE_REGEXP',
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_ESCAPE_SEQUENCE',
  'CANNOT_PARSE_QUOTED_STRING',
  'CANNOT_PARSE_DATE',
  'CANNOT_PARSE_DATETIME',
  'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING',
  'CANNOT_PARSE_IPV4',
  'CANNOT_PARSE_IPV6',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  'CANNOT_PARSE_UUID',
  'DUPLICATE_COLUMN',
  'ILLEGAL_COLUMN',
  'UNKNOWN_ELEMENT_IN_AST',
  'UNKNOWN_TYPE_OF_AST_NODE',
  'THERE_IS_NO_COLUMN',
  'TOO_DEEP_AST',
  'TOO_BIG_AST',
  'UNEXPECTED_AST_STRUCTURE',
  'SYNTAX_ERROR',
  'INCORRECT_DATA',
  'TYPE_MISMATCH',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
]) {
  STATUS_OF[name] = 400;
}
for (const name of [
  'UNKNOWN_TABLE',
  'UNKNOWN_FUNCTION',
  'UNKNOWN_IDENTIFIER',
  'UNKNOWN_TYPE',
  'UNKNOWN_STORAGE',
  'UNKNOWN_DATABASE',
  'UNKNOWN_SETTING',
  'UNKNOWN_DIRECTION_OF_SORTING',
  'UNKNOWN_AGGREGATE_FUNCTION',
  'UNKNOWN_FORMAT',
  'UNKNOWN_DATABASE_ENGINE',
  'UNKNOWN_TYPE_OF_QUERY',
  'UNKNOWN_ROLE',
]) {
  STATUS_OF[name] = 404;
}

/** An error this server raises itself, in ClickHouse's form. */
class WireError extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(`Code: ${code}. DB::Exception: ${message}. (${type})`);
  }
}

/** Starts the server on a free loopback port. */
export async function startChdbHttpServer(options: ChdbHttpServerOptions): Promise<ChdbHttpServer> {
  const admin = new Session(options.path);
  const version = String(
    (await admin.queryAsync('SELECT version()', { format: 'TabSeparated' })).text(),
  ).trim();
  const user = options.user ?? 'default';
  const password = options.password ?? '';
  // chdb binds parameters per process, and settings per connection: one query at a time keeps
  // each request's settings and parameters its own.
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  const sessions = sessionPool(options.path);
  const queryLog = process.env.CHDB_QUERY_LOG;
  const wholeLogMs = Number(process.env.CHDB_QUERY_LOG_WHOLE_MS ?? 80);
  // Where a large insert's data waits for ClickHouse to read it (see stageInsertData).
  const spool = mkdtempSync(join(tmpdir(), 'chdb-insert-'));

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, error, version, undefined);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const rawBody = await readBody(req);
    if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.search)) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
      res.end('Ok.\n');
      return;
    }
    if (url.pathname !== '/') {
      throw new WireError(404, 'UNKNOWN_TYPE_OF_QUERY', `No handler for ${url.pathname}`);
    }
    const queryId = url.searchParams.get('query_id') || randomUUID();
    try {
      checkUser(req, url, user, password);
      const encoding = String(req.headers['content-encoding'] ?? '');
      const bytes = encoding === 'gzip' ? gunzipSync(rawBody) : rawBody;
      const inParam = url.searchParams.get('query');
      // A large insert's data stays bytes on its way to the file chdb reads (stageInsertData).
      const insert = inParam === null ? splitInsert(bytes) : null;
      const body = insert?.head[0] ?? bytes.toString('utf8');
      const sql = inParam === null ? body : body ? `${inParam}\n${body}` : inParam;
      if (!sql.trim()) throw new WireError(62, 'SYNTAX_ERROR', 'Empty query');
      if (url.searchParams.has('session_id')) {
        throw new WireError(48, 'NOT_IMPLEMENTED', 'HTTP sessions are not supported here');
      }
      const settings: Array<[string, string]> = [];
      const params: Record<string, string> = {};
      for (const [name, value] of url.searchParams) {
        if (name.startsWith('param_')) params[name.slice(6)] = value;
        else if (!NOT_SETTINGS.has(name)) {
          if (!SETTING_NAME.test(name))
            throw new WireError(115, 'UNKNOWN_SETTING', `Unknown setting ${name}`);
          settings.push([name, value]);
        }
      }
      // `readonly` last, as the server checks every change against the user's profile, not
      // against the settings of the same request.
      settings.sort(([a], [b]) => Number(a === 'readonly') - Number(b === 'readonly'));
      const database = url.searchParams.get('database');
      // An INSERT answers no rows, whether its data follows the `query` parameter or the query
      // in the body (where only its start is read: the data may be many megabytes).
      const isInsert =
        INSERT_FORMAT.test(inParam ?? '') ||
        (inParam === null && /^\s*INSERT\b/i.test(sql.slice(0, 64)));
      const format = isInsert
        ? undefined
        : (FORMAT_CLAUSE.exec(sql)?.[1] ??
          url.searchParams.get('default_format') ??
          'TabSeparated');
      const started = process.hrtime.bigint();
      const list = [...SERVER_DEFAULTS.filter(([n]) => !url.searchParams.has(n)), ...settings];
      let ran = started;
      const result = await serialized(async () => {
        ran = process.hrtime.bigint();
        const session = await sessions.take(database, list);
        let healthy = false;
        try {
          // The server takes one statement per request; chdb would run them all. Without a `;`
          // there is one, and the check (a query of its own) is skipped.
          if (!isInsert && !/^\s*INSERT\b/i.test(sql.slice(0, 64)) && sql.includes(';')) {
            await refuseMultiStatements(session, sql);
          }
          const split = insert ?? (isInsert ? splitInsert(sql) : null);
          const staged = split ? stageInsertData(split, spool) : null;
          let answer: Awaited<ReturnType<NativeBinding['QueryAsyncConnection']>>;
          try {
            answer = await native.QueryAsyncConnection(
              session.connection,
              staged?.sql ?? sql,
              format ?? 'TabSeparated',
              params,
            );
          } finally {
            if (staged) rmSync(staged.file, { force: true });
          }
          healthy = true;
          return answer;
        } finally {
          sessions.give(database, list, session, healthy);
        }
      });
      const output = Buffer.from(result.bytes);
      const elapsed = process.hrtime.bigint() - started;
      // A developer's profile of the tests' queries: CHDB_QUERY_LOG=<file> appends each one's
      // milliseconds in chdb, not waiting its turn, and statement (whole when slower than
      // CHDB_QUERY_LOG_WHOLE_MS, 80 by default, but an INSERT without its data, which may be many
      // megabytes).
      if (queryLog) {
        const ms = Number(process.hrtime.bigint() - ran) / 1e6;
        const whole = ms > wholeLogMs && !isInsert && !/^\s*INSERT\b/i.test(sql.slice(0, 64));
        const text = whole ? `${sql} ${JSON.stringify(params)}` : sql.slice(0, 120);
        appendFileSync(queryLog, `${ms.toFixed(1)}\t${text.replace(/\s+/g, ' ')}\n`);
      }
      const summary = {
        read_rows: String(result.rowsRead),
        read_bytes: String(result.bytesRead),
        result_bytes: String(output.length),
        elapsed_ns: String(elapsed),
      };
      const headers: Record<string, string> = {
        'Content-Type': contentTypeOf(format),
        'X-ClickHouse-Server-Display-Name': 'chdb-http-server',
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Timezone': 'UTC',
        'X-ClickHouse-Summary': JSON.stringify(summary),
      };
      if (format) headers['X-ClickHouse-Format'] = format;
      const compress =
        url.searchParams.get('enable_http_compression') === '1' &&
        /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
      if (compress) headers['Content-Encoding'] = 'gzip';
      res.writeHead(200, headers);
      res.end(compress ? gzipSync(output) : output);
    } catch (error) {
      sendError(res, error, version, queryId);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    version,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
      sessions.close();
      admin.close();
      rmSync(spool, { recursive: true, force: true });
    },
  };
}

/**
 * Sessions kept open between requests, one per database and list of setting names: opening one,
 * its `USE` and its `SET` cost more than most of the tests' queries. A session taken for other
 * values of the same names (an insert's deduplication token is new each time) is given them by
 * a `SET` of every name, so it holds exactly the values a new one would; one whose settings
 * include `readonly` is only reused with the same values, as such a session refuses a `SET`. No
 * statement the server runs changes a session's state otherwise (one SELECT or INSERT per
 * request); one that failed is closed rather than reused.
 */
function sessionPool(path: string) {
  const MAX_IDLE = 16;
  const idle = new Map<string, { session: Session; list: string }>();
  const keyOf = (database: string | null, settings: ReadonlyArray<[string, string]>) => {
    const names = settings.some(([n]) => n === 'readonly')
      ? listOf(settings)
      : settings.map(([n]) => n).join(', ');
    return `${database ?? ''}\n${names}`;
  };
  const listOf = (settings: ReadonlyArray<[string, string]>) =>
    settings.map(([n, v]) => `${n} = ${settingLiteral(v)}`).join(', ');
  return {
    async take(database: string | null, settings: ReadonlyArray<[string, string]>) {
      const key = keyOf(database, settings);
      const list = listOf(settings);
      const kept = idle.get(key);
      if (kept) idle.delete(key);
      const session = kept?.session ?? new Session(path);
      try {
        if (!kept && database) await session.queryAsync(`USE ${quoteIdentifier(database)}`);
        if (kept?.list !== list) await session.queryAsync(`SET ${list}`);
      } catch (error) {
        session.close();
        throw error;
      }
      return session;
    },
    give(
      database: string | null,
      settings: ReadonlyArray<[string, string]>,
      session: Session,
      healthy: boolean,
    ): void {
      const key = keyOf(database, settings);
      if (!healthy || idle.has(key)) {
        session.close();
        return;
      }
      idle.set(key, { session, list: listOf(settings) });
      // The least recently used session goes first.
      if (idle.size > MAX_IDLE) {
        const [oldest, stale] = idle.entries().next().value as [
          string,
          { session: Session; list: string },
        ];
        idle.delete(oldest);
        stale.session.close();
      }
    },
    close(): void {
      for (const { session } of idle.values()) session.close();
      idle.clear();
    },
  };
}

async function refuseMultiStatements(session: Session, sql: string): Promise<void> {
  try {
    await session.queryBindAsync('SELECT formatQuery({q:String})', { q: sql });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!message.includes('Multi-statements are not allowed')) return;
    throw new WireError(
      62,
      'SYNTAX_ERROR',
      message.replace(/^Code: 62\. DB::Exception: /, '').replace(/\s*: In scope [\s\S]*$/, ''),
    );
  }
}

function checkUser(req: IncomingMessage, url: URL, user: string, password: string): void {
  let given: [string, string] | undefined;
  const auth = String(req.headers.authorization ?? '');
  if (auth.startsWith('Basic ')) {
    const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    given = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  } else if (req.headers['x-clickhouse-user'] !== undefined) {
    given = [
      String(req.headers['x-clickhouse-user']),
      String(req.headers['x-clickhouse-key'] ?? ''),
    ];
  } else if (url.searchParams.has('user')) {
    given = [url.searchParams.get('user') ?? '', url.searchParams.get('password') ?? ''];
  }
  const [name, key] = given ?? ['default', ''];
  if (name !== user || key !== password) {
    throw new WireError(
      516,
      'AUTHENTICATION_FAILED',
      `${name}: Authentication failed: password is incorrect, or there is no user with such name`,
    );
  }
}

function sendError(
  res: ServerResponse,
  error: unknown,
  version: string,
  queryId: string | undefined,
): void {
  const message = error instanceof Error ? error.message : String(error);
  const code =
    error instanceof WireError
      ? error.code
      : Number(
          (error as { clickhouseCode?: number }).clickhouseCode ??
            /Code: (\d+)/.exec(message)?.[1] ??
            1001,
        );
  const types = [...message.matchAll(/\(([A-Z][A-Z0-9_]{2,})\)/g)];
  const type = types.at(-1)?.[1] ?? '';
  const headers: Record<string, string> = {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Exception-Code': String(code),
    'X-ClickHouse-Server-Display-Name': 'chdb-http-server',
  };
  if (queryId) headers['X-ClickHouse-Query-Id'] = queryId;
  const text = /\(version [^)]*\)\s*$/.test(message) ? message : `${message} (version ${version})`;
  res.writeHead(STATUS_OF[type] ?? 500, headers);
  res.end(`${text}\n`);
}

/** Inserts whose data is at least this long read it from a file instead of the query text. */
const STAGED_INSERT_BYTES = 1 << 20;
/** An INSERT's statement up to its FORMAT clause, and the data after it (ClickHouse's rule). */
const INSERT_HEAD = /^(\s*INSERT\s[^;]*?)\bFORMAT\s+([A-Za-z0-9_]+)[ \t\f]*\r?\n?/i;

/**
 * A server streams an insert's data from the request into the format's parser; chdb takes one
 * query text, and parses data inline in it about twice as slowly as from a file. So a large
 * insert's data goes to a file in `dir` and the statement reads it with `FROM INFILE`, as a
 * server would read the body: the same rows, settings and errors, at a server's cost.
 */
function stageInsertData(insert: SplitInsert, dir: string): { sql: string; file: string } {
  const file = join(dir, `${randomUUID()}.data`);
  writeFileSync(file, insert.data);
  return { sql: `${insert.head[1]}FROM INFILE '${file}' FORMAT ${insert.head[2]}`, file };
}

/** An INSERT's statement up to its FORMAT clause ({@link INSERT_HEAD}), and its data. */
interface SplitInsert {
  head: RegExpExecArray;
  data: string | Uint8Array;
}

/**
 * A statement of at least {@link STAGED_INSERT_BYTES} holding an INSERT and its data, split for
 * {@link stageInsertData}; null (run the text as it is) for a small one or any statement this
 * does not recognise. A body's data stays bytes: a server never turns an insert's data into text.
 */
function splitInsert(statement: string | Buffer): SplitInsert | null {
  if (statement.length < STAGED_INSERT_BYTES) return null;
  const text = typeof statement === 'string';
  // A character cut at the end of the slice cannot be in a statement's head that ends before it.
  const start = text ? statement.slice(0, 64 * 1024) : statement.subarray(0, 64 * 1024).toString();
  const head = INSERT_HEAD.exec(start);
  if (!head || /\b(SETTINGS|SELECT|VALUES|INFILE)\b/i.test(head[1] as string)) return null;
  const data = text
    ? statement.slice(head[0].length)
    : statement.subarray(Buffer.byteLength(head[0]));
  return { head, data };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function settingLiteral(value: string): string {
  if (/^-?\d+(\.\d+)?$/.test(value)) return value;
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

function contentTypeOf(format: string | undefined): string {
  if (format === undefined) return 'text/plain; charset=UTF-8';
  if (/^JSON/i.test(format)) return 'application/json; charset=UTF-8';
  return 'text/tab-separated-values; charset=UTF-8';
}
