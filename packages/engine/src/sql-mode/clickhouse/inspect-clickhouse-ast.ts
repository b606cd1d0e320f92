import { READ_ONLY_SQL } from '@analytics-chart/protocol';

/**
 * Reads ClickHouse's own parse of a SQL-mode query (`EXPLAIN AST`, which parses without
 * analysing or running anything) and decides whether it stays inside the workspace. ClickHouse
 * enforces the rest itself (`readonly=1` refuses writes, setting changes and the table
 * functions that reach files or the network); this closes what `readonly` leaves open with one
 * user for all workspaces: tables of other databases and functions that read files or other
 * tables by name. Pure: tested by table.
 */

/** The verdict on one query. */
export type AstVerdict = { ok: true } | { ok: false; message: string };

/** Table functions that only generate values. */
const TABLE_FUNCTIONS = new Set([
  'numbers',
  'numbers_mt',
  'zeros',
  'zeros_mt',
  'generateSeries',
  'generate_series',
  'values',
  // How ClickHouse parses a standard `(VALUES (1, 'a'), (2, 'b'))` in FROM.
  'SQLStandardValues',
  'null',
]);

/** Functions that read files, other tables by name, dictionaries or server configuration. */
const REFUSED_FUNCTION = new RegExp(
  '^(file|joinGet|joinGetOrNull|hasColumnInTable|catboostEvaluate|modelEvaluate|' +
    'getServerSetting|getMacro|dict[A-Za-z]*|currentProfiles|currentRoles|enabledProfiles|' +
    'enabledRoles|defaultProfiles|defaultRoles)$',
  'i',
);

const IN_FUNCTIONS = new Set([
  'in',
  'notIn',
  'globalIn',
  'globalNotIn',
  'nullIn',
  'notNullIn',
  'globalNullIn',
  'globalNotNullIn',
]);

interface AstNode {
  depth: number;
  kind: string;
  name: string;
}

function parseLines(ast: string): AstNode[] {
  const nodes: AstNode[] = [];
  for (const line of ast.split('\n')) {
    if (!line.trim()) continue;
    const depth = line.length - line.trimStart().length;
    const text = line.trim().replace(/ \(children \d+\)$/, '');
    const space = text.indexOf(' ');
    const kind = space < 0 ? text : text.slice(0, space);
    const name = space < 0 ? '' : text.slice(space + 1).replace(/ \(alias [^)]*\)$/, '');
    nodes.push({ depth, kind, name });
  }
  return nodes;
}

/**
 * Checks `ast` (the text of `EXPLAIN AST <query>`) for a query whose current database is
 * `database`. A table name without a dot resolves there (or to a CTE); one that starts with
 * `<database>.` is in it whether the dot separates database and table or belongs to one quoted
 * name. Anything else is refused, including names that merely look qualified. `format` is the
 * output format the AST was asked in (the client appends it to the explained text).
 */
export function inspectClickHouseAst(ast: string, database: string, format: string): AstVerdict {
  const nodes = parseLines(ast);
  const roots = nodes.filter((n) => n.depth === 0);
  if (roots.length !== 1 || roots[0]?.kind !== 'SelectWithUnionQuery') {
    return { ok: false, message: READ_ONLY_SQL };
  }
  // The root's own children: the selects, then optionally INTO OUTFILE, FORMAT and SETTINGS;
  // the FORMAT that the client appends to ask for the AST as text is the last one.
  const rootChildren = nodes.filter((n) => n.depth === 1);
  if (rootChildren.at(-1)?.kind === 'Identifier' && rootChildren.at(-1)?.name === format)
    rootChildren.pop();
  if (rootChildren.some((n, i) => (i === 0 ? n.kind !== 'ExpressionList' : n.kind !== 'Set'))) {
    return {
      ok: false,
      message: 'SQL mode queries return their rows to the engine only (no INTO OUTFILE or FORMAT)',
    };
  }
  const inWorkspace = (name: string) => !name.includes('.') || name.startsWith(`${database}.`);
  const outside = (name: string): AstVerdict => ({
    ok: false,
    message: `SQL mode reads only this workspace's collections; '${name}' is not one of them`,
  });
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i] as AstNode;
    const parent = parentOf(nodes, i);
    if (node.kind === 'TableIdentifier' && !inWorkspace(node.name)) return outside(node.name);
    if (node.kind !== 'Function') continue;
    if (parent?.kind === 'TableExpression' && !TABLE_FUNCTIONS.has(node.name)) {
      return { ok: false, message: `table function '${node.name}' is not available in SQL mode` };
    }
    if (REFUSED_FUNCTION.test(node.name)) {
      return { ok: false, message: `function '${node.name}' is not available in SQL mode` };
    }
    if (IN_FUNCTIONS.has(node.name)) {
      // `x IN name` reads the table `name`: its second argument, two levels down.
      const args = nodes.slice(i + 1).filter((n, k, rest) => {
        const end = rest.findIndex((m) => m.depth <= node.depth);
        return (end < 0 || k < end) && n.depth === node.depth + 2;
      });
      const right = args[1];
      if (right?.kind === 'Identifier' && !inWorkspace(right.name)) return outside(right.name);
    }
  }
  return { ok: true };
}

function parentOf(nodes: AstNode[], index: number): AstNode | undefined {
  const depth = (nodes[index] as AstNode).depth;
  for (let i = index - 1; i >= 0; i--) {
    if ((nodes[i] as AstNode).depth < depth) return nodes[i];
  }
  return undefined;
}
