import { READ_ONLY_SQL } from '@analytics-chart/protocol';

/**
 * The first lock-down layer of SQL mode, decided on DuckDB's own parse tree (the JSON that
 * `json_serialize_sql` returns), never on the SQL text: exactly one SELECT, tables named by
 * collection only, no table functions but a few generators, and none of the functions that reveal
 * the instance (settings, catalogs, paths, sequences). The database configuration and the
 * read-only transaction behind it are the next layers; this one gives clear answers early.
 */

/** Table functions a query may call: pure row generators, reading nothing. */
const ALLOWED_TABLE_FUNCTIONS = new Set([
  'range',
  'generate_series',
  'unnest',
  'json_each',
  'json_tree',
]);

/** Table or scalar functions whose job is reading files or URLs. */
const FILE_FUNCTION =
  /^(read_|parquet_|iceberg_|delta_|sqlite_|postgres_|mysql_)|^(glob|sniff_csv)$/;

/**
 * Scalar functions refused by name: they reveal settings, catalogs, the session, sequences or
 * secrets, run SQL given as text, or block a thread (`pg_sleep`).
 */
const DENIED_FUNCTIONS = new Set([
  'current_setting',
  'current_database',
  'current_catalog',
  'current_schema',
  'current_schemas',
  'current_role',
  'current_user',
  'session_user',
  'user',
  'current_query',
  'current_connection_id',
  'current_transaction_id',
  'current_query_id',
  'txid_current',
  'in_search_path',
  'col_description',
  'obj_description',
  'shobj_description',
  'nextval',
  'currval',
  'getenv',
  'which_secret',
  'checkpoint',
  'force_checkpoint',
  'query',
  'query_table',
  'json_execute_serialized_sql',
  'sql_auto_complete',
  'test_all_types',
  'test_vector_types',
  'arrow_scan',
  'arrow_scan_dumb',
  'seq_scan',
  'summary',
]);

/** Prefixes of the system functions refused as families (`duckdb_settings()`, `pragma_version()`…). */
const DENIED_PREFIXES = ['duckdb_', 'pragma_', 'pg_', 'has_', 'enable_', 'disable_', 'icu_'];
/** The one harmless member of a refused family. */
const ALLOWED_EXCEPTIONS = new Set(['pg_typeof']);

/** Table references that are not data: `DESCRIBE`, `SHOW`, `SUMMARIZE` and internal kinds. */
const REFUSED_TABLE_REFS = new Set(['SHOW_REF', 'COLUMN_DATA', 'DELIM_GET', 'BOUND_TABLE_REF']);

/** Query node kinds a SELECT is built from; anything else is refused rather than trusted. */
const QUERY_NODES = new Set([
  'SELECT_NODE',
  'SET_OPERATION_NODE',
  'RECURSIVE_CTE_NODE',
  'CTE_NODE',
]);

/** The answer to anything that reads files or URLs. */
export const FILE_ACCESS_REFUSED =
  'SQL mode cannot read files or URLs; query your collections by name, e.g. FROM all_events';
/** The answer to qualified names and catalogs. */
export const CATALOG_REFUSED =
  "SQL mode queries only the workspace's collections; schema- or database-qualified table names are not allowed";

/** What the parse tree allows, or the one sentence that refuses it. */
export type AstVerdict =
  | {
      ok: true;
      /** Unqualified table names the query reads (collections, CTE names, or unknown names). */
      tables: string[];
      /** Lower-case names of every function the query calls. */
      functions: string[];
    }
  | { ok: false; status: 400; message: string };

function refuse(message: string): AstVerdict {
  return { ok: false, status: 400, message };
}

function clipName(name: string): string {
  return name.length > 60 ? `${name.slice(0, 57)}...` : name;
}

/** Whether a bare table name is really a file path or URL (DuckDB's replacement scans). */
export function looksLikeFile(name: string): boolean {
  return /[/\\]|:\/\/|^~|\.(csv|tsv|txt|json|jsonl|ndjson|parquet|db|duckdb|sqlite|gz|zst|arrow|xlsx?)$/i.test(
    name,
  );
}

function functionRefusal(name: string): string | null {
  if (FILE_FUNCTION.test(name)) return FILE_ACCESS_REFUSED;
  if (ALLOWED_EXCEPTIONS.has(name)) return null;
  if (DENIED_FUNCTIONS.has(name) || DENIED_PREFIXES.some((p) => name.startsWith(p))) {
    return `${clipName(name)}() is not available in SQL mode`;
  }
  return null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * Reads the output of DuckDB's `json_serialize_sql` for one request and decides whether it may
 * run. Parse errors become a syntax sentence, anything that is not a single SELECT the exact
 * read-only answer, and every table function, qualified table and system function is checked.
 */
export function inspectSqlAst(serialized: string): AstVerdict {
  let tree: unknown;
  try {
    tree = JSON.parse(serialized);
  } catch {
    return refuse('The SQL query could not be read');
  }
  if (!isObject(tree)) return refuse('The SQL query could not be read');
  if (tree.error === true) {
    const message = text(tree.error_message);
    if (/only select statements/i.test(message)) return refuse(READ_ONLY_SQL);
    if (text(tree.error_type) === 'parser') {
      return refuse(`SQL syntax error: ${clipQuoted(message.split('\n')[0] ?? '')}`.trim());
    }
    return refuse(READ_ONLY_SQL);
  }
  const statements = Array.isArray(tree.statements) ? tree.statements : [];
  if (statements.length === 0) return refuse('The SQL query contains no statement');
  if (statements.length > 1) return refuse(READ_ONLY_SQL);

  const tables = new Set<string>();
  const functions = new Set<string>();
  // An explicit stack instead of recursion: a deeply nested query must not overflow ours.
  const stack: unknown[] = [statements[0]];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    if (!isObject(node)) continue;
    const verdict = inspectNode(node, tables, functions);
    if (verdict) return verdict;
    for (const value of Object.values(node)) {
      if (typeof value === 'object' && value !== null) stack.push(value);
    }
  }
  return { ok: true, tables: [...tables], functions: [...functions] };
}

function inspectNode(
  node: Record<string, unknown>,
  tables: Set<string>,
  functions: Set<string>,
): AstVerdict | null {
  const type = text(node.type);
  if (typeof node.function_name === 'string') {
    const name = node.function_name.toLowerCase();
    // DuckDB itself writes `main` for functions it rewrites (`[1]` is `main.list_value`).
    if (!['', 'main'].includes(text(node.schema)) || !['', 'system'].includes(text(node.catalog))) {
      return refuse('SQL mode does not allow schema- or database-qualified function names');
    }
    const refusal = functionRefusal(name);
    if (refusal) return refuse(refusal);
    functions.add(name);
  }
  if (type.endsWith('_NODE') && !QUERY_NODES.has(type)) return refuse(READ_ONLY_SQL);
  if (REFUSED_TABLE_REFS.has(type)) {
    return refuse(READ_ONLY_SQL);
  }
  if (type === 'TABLE_FUNCTION') {
    const fn = isObject(node.function) ? node.function : {};
    const name = text(fn.function_name).toLowerCase();
    if (text(fn.schema) || text(fn.catalog)) return refuse(CATALOG_REFUSED);
    if (FILE_FUNCTION.test(name)) return refuse(FILE_ACCESS_REFUSED);
    if (!ALLOWED_TABLE_FUNCTIONS.has(name)) {
      return refuse(
        `Table function ${clipName(name)}() is not available in SQL mode; query your collections by name`,
      );
    }
  }
  if (type === 'BASE_TABLE') {
    if (text(node.catalog_name) || text(node.schema_name)) return refuse(CATALOG_REFUSED);
    if (node.at_clause) return refuse('Time travel (AT) is not available in SQL mode');
    const name = text(node.table_name);
    if (name) tables.add(name);
  }
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Shortens long quoted fragments of a DuckDB message, then the whole message, so no large piece
 * of SQL is echoed (quotes inside the SQL can leave fragments the first pass does not see).
 */
export function clipQuoted(message: string): string {
  const clipped = message
    .replace(/"([^"]{41,})"/g, (_, inner: string) => `"${inner.slice(0, 37)}..."`)
    .replace(/'([^']{41,})'/g, (_, inner: string) => `'${inner.slice(0, 37)}...'`);
  return clipped.length > 300 ? `${clipped.slice(0, 297)}...` : clipped;
}
