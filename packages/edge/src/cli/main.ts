#!/usr/bin/env node
/**
 * `analytics-edge <command>` (`pnpm edge <command>` in this repository): mint signing keys and
 * signed query ids, inspect ids, and serve the edge standalone. Every command answers `--help`;
 * every bad input is one line on stderr and exit code 1. Paths are relative to the directory
 * the command was started in (INIT_CWD under pnpm).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ParamValue } from '@analytics-chart/protocol';
import { readSigningKeysFile } from '../adapter/node/signing-keys-file.ts';
import { resolveSettings } from '../config/edge-config.ts';
import type { EdgeModuleConfig } from '../config/edge-module-config.ts';
import { snippetsFor } from '../embed/embed-snippets.ts';
import { compileRegistry } from '../registry/compile-definition.ts';
import type { QueryDefinition } from '../registry/query-definition.ts';
import { type IssuedId, JTI_PATTERN, LABEL_PATTERN } from '../store/edge-store.ts';
import { recordIssued } from '../store/record-issued.ts';
import { Keyring } from '../tokens/keyring.ts';
import { createQuerySigner, SignError } from '../tokens/query-signer.ts';
import { generateSigningKey, parseSigningKeys, type SigningKey } from '../tokens/signing-keys.ts';
import { verifyQueryId } from '../tokens/verify-query-id.ts';
import { checkCommand } from './check-command.ts';
import { loadEdgeModuleConfig } from './load-config.ts';
import { serveCommand, storeFrom } from './serve-command.ts';
import { elementSnippetText, publicSnippetsText } from './snippets-text.ts';

const KEYGEN_USAGE = `analytics-edge keygen [--kid NAME]
    Prints a new signing key and how to set EDGE_SIGNING_KEYS.
`;

const SIGN_USAGE = `analytics-edge sign --query NAME [--param k=v]... [--ttl 30d] [--public | --subject ID]
                    [--range KEY] [--aud ORIGIN]... [--definition FILE.json] [--config FILE]
                    [--keys FILE] [--base URL] [--label TEXT]
    Signs a query id and prints it with ready-to-paste HTML: for --public, the script + element
    snippet, the iframe snippet (for CMSs that strip scripts) and the embed URL (for oEmbed).
    Keys: --keys FILE, else EDGE_SIGNING_KEYS, else the config's signingKeys.
    Config: --config FILE, else analytics-edge.config.{ts,mts,js,mjs,json} in this directory.
    With EDGE_REDIS_URL set, the id is recorded in the shared registry (minted by \`cli\`).
`;

const IDS_USAGE = `analytics-edge ids list [--limit 50] [--cursor C] [--json] | show JTI | revoke JTI
    Lists, shows and revokes issued ids in the registry the edge replicas share (EDGE_REDIS_URL,
    EDGE_REDIS_PREFIX). A revocation reaches every replica within a second, without a restart.
`;

const INSPECT_USAGE = `analytics-edge inspect ID [--keys FILE]
    Shows an id's header and claims; verifies it when keys are available.
`;

const SERVE_USAGE = `analytics-edge serve [--config FILE] [--port 8787] [--host 127.0.0.1] [--base-path /analytics]
    Serves the edge standalone: the registry and settings from the config (JSON, or JS; TypeScript
    where the runtime loads it), queries over HTTP to ANALYTICS_BASE_URL with ANALYTICS_API_KEY,
    ids signed with EDGE_SIGNING_KEYS, and signed-in viewers recognised by forwarding their
    cookie to the config's session.url (or EDGE_SESSION_URL). Optional: EDGE_ALLOWED_ORIGINS,
    EDGE_REVOKED_IDS, PORT, EDGE_REDIS_URL (state shared by replicas: revocations, the id registry,
    rate limits; without it the edge keeps them in its process and says so), EDGE_REDIS_PREFIX.
    The config's admins.subjects may use the admin API (/api/admin/ids).
`;

const CHECK_USAGE = `analytics-edge check [--config FILE]
    Runs every query of the config against the workspace it will query (ANALYTICS_BASE_URL with
    ANALYTICS_API_KEY, or the config's backend) and names what would draw wrong: a collection the
    workspace does not have, a query the service refuses, a field no event has. Exits 1 on errors.
`;

const USAGE = `Usage: analytics-edge <command> [options]   (analytics-edge <command> --help)

${KEYGEN_USAGE}
${SIGN_USAGE}
${INSPECT_USAGE}
${CHECK_USAGE}
${SERVE_USAGE}
${IDS_USAGE}`;

const cwd = process.env.INIT_CWD ?? process.cwd();

/** One line on stderr, exit code 1: the answer to every bad input. */
function fail(message: string): never {
  // The library's errors name it ("analytics edge: …") for host logs; here the prefix says it.
  const text = message.replace(/^analytics edge: /, '').replaceAll('\n', ' ');
  process.stderr.write(`analytics-edge: ${text}\n`);
  process.exit(1);
}

function keysFrom(
  file: string | undefined,
  fallback?: EdgeModuleConfig['signingKeys'],
): SigningKey[] {
  if (file) return readSigningKeysFile(resolve(cwd, file));
  const env = process.env.EDGE_SIGNING_KEYS;
  if (env?.trim()) return parseSigningKeys(env);
  if (fallback) return typeof fallback === 'string' ? parseSigningKeys(fallback) : [...fallback];
  throw new Error(
    'no signing keys: set EDGE_SIGNING_KEYS or pass --keys FILE (analytics-edge keygen makes one)',
  );
}

function keygen(args: string[]) {
  const { values } = parseArgs({ args, options: { kid: { type: 'string' } } });
  const key = generateSigningKey();
  if (values.kid) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(values.kid)) fail('--kid uses 1-64 of A-Z a-z 0-9 . _ -');
    key.kid = values.kid;
  }
  process.stdout.write(`kid:    ${key.kid}
secret: ${key.secret}

Set it as the edge's signing key (a secret: keep it out of source control):

  EDGE_SIGNING_KEYS=${key.kid}:${key.secret}

To rotate, put the new key first and keep the old one after it until its ids expire:

  EDGE_SIGNING_KEYS=${key.kid}:${key.secret},<old kid>:<old secret>

On Cloudflare Workers: wrangler secret put EDGE_SIGNING_KEYS
For development, the same text can live in a file passed with --keys (e.g. .data/edge-signing-keys).
`);
}

function paramValue(
  definition: QueryDefinition | undefined,
  name: string,
  raw: string,
): ParamValue {
  const spec = definition?.params?.[name];
  const type = spec?.from === 'signer' ? (spec.type ?? 'string') : 'string';
  if (type === 'number') {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n))
      fail(`--param ${name}: expected a number, got '${raw}'`);
    return n;
  }
  if (type === 'boolean') {
    if (raw !== 'true' && raw !== 'false') fail(`--param ${name}: expected true or false`);
    return raw === 'true';
  }
  return raw;
}

async function sign(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      query: { type: 'string' },
      param: { type: 'string', multiple: true },
      ttl: { type: 'string' },
      public: { type: 'boolean' },
      subject: { type: 'string' },
      range: { type: 'string' },
      aud: { type: 'string', multiple: true },
      definition: { type: 'string' },
      config: { type: 'string' },
      keys: { type: 'string' },
      base: { type: 'string' },
      label: { type: 'string' },
    },
  });
  if (values.label !== undefined && !LABEL_PATTERN.test(values.label)) {
    fail('--label: 1-200 characters of plain text (no control characters, < or >)');
  }
  if (!values.query && !values.definition)
    fail('sign needs --query NAME (or --definition FILE.json)');
  if (values.query && values.definition) fail('give --query or --definition, not both');
  if (!values.public && !values.subject)
    fail('sign needs --public (CMS embeds) or --subject ID (a session-bound id)');

  let config: EdgeModuleConfig = { queries: {} };
  let inline: QueryDefinition | undefined;
  if (values.definition) {
    try {
      inline = JSON.parse(readFileSync(resolve(cwd, values.definition), 'utf8')) as QueryDefinition;
    } catch (error) {
      fail(`cannot read the definition ${values.definition}: ${(error as Error).message}`);
    }
    if (values.config)
      config = (await loadEdgeModuleConfig(cwd, values.config, process.env)).config;
  } else {
    config = (await loadEdgeModuleConfig(cwd, values.config, process.env)).config;
  }
  const keyring = new Keyring(keysFrom(values.keys, config.signingKeys));
  const settings = resolveSettings({
    ...config,
    signingKeys: [],
    backend: { query: async () => ({ result: [], metadata: {} }) },
  });
  const registry = compileRegistry(config.queries);
  const definition = inline ?? (values.query ? config.queries[values.query] : undefined);
  const params: Record<string, ParamValue> = {};
  for (const pair of values.param ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) fail(`--param ${pair}: write it as name=value`);
    const name = pair.slice(0, eq);
    params[name] = paramValue(definition, name, pair.slice(eq + 1));
  }
  const signer = createQuerySigner(keyring, registry, settings);
  const signed = await signer.sign({
    ...(values.query ? { query: values.query } : {}),
    ...(inline ? { definition: inline } : {}),
    params,
    ...(values.public ? { public: true } : {}),
    ...(values.subject ? { subject: values.subject } : {}),
    ...(values.ttl ? { ttl: values.ttl } : {}),
    ...(values.range ? { range: values.range } : {}),
    ...(values.aud?.length ? { audience: values.aud } : {}),
  });
  const store = await storeFrom(process.env);
  if (store) {
    try {
      await recordIssued(store, signed.claims, 'cli', values.label);
    } finally {
      await store.close();
    }
  }
  const base = (
    values.base ??
    process.env.EDGE_PUBLIC_URL ??
    config.publicUrl ??
    'https://YOUR-EDGE.example.com/analytics'
  ).replace(/\/+$/, '');
  const what = values.query ? `"${values.query}"` : 'an inline definition';
  const snippets = snippetsFor({ base, id: signed.id, title: definition?.title ?? 'Chart' });
  process.stdout.write(`Signed query id for ${what} (${values.public ? 'public' : `bound to subject ${values.subject}`}; expires ${signed.expiresAt}; jti ${signed.jti}):

${signed.id}

${values.public ? publicSnippetsText(snippets) : elementSnippetText(snippets)}
${
  store
    ? `Recorded in the shared registry. To revoke it: analytics-edge ids revoke ${signed.jti}`
    : `To revoke it before it expires, add its jti (${signed.jti}) to EDGE_REVOKED_IDS (or, with
EDGE_REDIS_URL set, run analytics-edge ids revoke ${signed.jti}); on Workers put it in the
EDGE_REVOCATIONS KV namespace.`
}
`);
}

async function inspect(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { keys: { type: 'string' } },
  });
  const id = positionals[0];
  if (!id) fail('inspect needs the id');
  const [h = '', p = ''] = id.split('.');
  let header: unknown;
  let claims: unknown;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    fail('that is not a compact JWT');
  }
  process.stdout.write(
    `header: ${JSON.stringify(header)}\nclaims: ${JSON.stringify(claims, null, 2)}\n`,
  );
  let keys: SigningKey[] | undefined;
  try {
    keys = keysFrom(values.keys);
  } catch {
    process.stdout.write(
      'signature: not checked (no keys: set EDGE_SIGNING_KEYS or pass --keys)\n',
    );
    return;
  }
  const outcome = await verifyQueryId(id, new Keyring(keys), {
    now: Math.floor(Date.now() / 1000),
    skewSeconds: 30,
    maxLength: 65_536,
  });
  process.stdout.write(
    outcome.ok
      ? 'signature: valid\n'
      : `signature: ${outcome.code === 'expired' ? 'valid, but the id has expired' : `refused (${outcome.reason})`}\n`,
  );
}

async function check(args: string[]) {
  const { values } = parseArgs({ args, options: { config: { type: 'string' } } });
  const code = await checkCommand({ config: values.config }, cwd, process.env, (text) =>
    process.stdout.write(text),
  );
  process.exitCode = code;
}

async function serve(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'base-path': { type: 'string' },
    },
  });
  await serveCommand(
    {
      config: values.config,
      port: values.port ?? process.env.PORT,
      host: values.host,
      basePath: values['base-path'],
    },
    cwd,
    process.env,
  );
}

/** Plain text for a terminal: control characters of stored fields shown as `?`. */
const printable = (text: string) => text.replace(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu, '?');

function idLine(id: IssuedId): string {
  const state = id.revokedAt ? `revoked ${id.revokedAt}` : `expires ${id.expiresAt}`;
  const what = id.query ?? `inline${id.title ? ` "${id.title}"` : ''}`;
  return printable(
    `${id.jti}  ${what}  ${id.public ? 'public' : 'session'}  by ${id.mintedBy}  ${id.issuedAt}  ${state}  views ${id.views}${id.label ? `  "${id.label}"` : ''}`,
  );
}

async function ids(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      limit: { type: 'string' },
      cursor: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const [verb, jti] = positionals;
  if (verb !== 'list' && verb !== 'show' && verb !== 'revoke') {
    fail('ids needs list, show JTI or revoke JTI (analytics-edge ids --help)');
  }
  if (verb !== 'list' && (jti === undefined || !JTI_PATTERN.test(jti))) {
    fail(`ids ${verb} needs a jti (the id's 22-character name, as ids list prints it)`);
  }
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) fail('--limit must be 1-1000');
  if (values.cursor !== undefined && !/^\d{1,9}$/.test(values.cursor)) {
    fail('--cursor must be the value a previous list printed');
  }
  const store = await storeFrom(process.env);
  if (!store) {
    fail(
      'ids needs EDGE_REDIS_URL: the registry the replicas share (an edge without one keeps its registry in its own process; use its admin API)',
    );
  }
  try {
    if (verb === 'list') {
      const page = await store.list(values.cursor, limit);
      if (values.json) process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
      else {
        for (const id of page.items) process.stdout.write(`${idLine(id)}\n`);
        if (page.next)
          process.stdout.write(`more: analytics-edge ids list --cursor ${page.next}\n`);
      }
    } else if (verb === 'show') {
      const found = await store.get(jti as string);
      if (!found) fail(`no id ${jti} is on record`);
      // JSON escapes control characters itself; bidi overrides are escaped too.
      const json = JSON.stringify(found, null, 2).replace(
        /[\u202A-\u202E\u2066-\u2069]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16)}`,
      );
      process.stdout.write(`${json}\n`);
    } else {
      await store.revoke(jti as string, Date.now());
      process.stdout.write(`revoked ${jti}: every replica refuses it within a second\n`);
    }
  } finally {
    await store.close();
  }
}

const COMMANDS: Record<string, { usage: string; run(args: string[]): unknown }> = {
  keygen: { usage: KEYGEN_USAGE, run: keygen },
  sign: { usage: SIGN_USAGE, run: sign },
  inspect: { usage: INSPECT_USAGE, run: inspect },
  check: { usage: CHECK_USAGE, run: check },
  serve: { usage: SERVE_USAGE, run: serve },
  ids: { usage: IDS_USAGE, run: ids },
};

async function main() {
  const [name, ...args] = process.argv.slice(2);
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) fail(`unknown command '${name}' (analytics-edge --help lists them)`);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(command.usage);
    return;
  }
  try {
    await command.run(args);
  } catch (error) {
    // parseArgs names the bad option in one sentence; the usage is one --help away.
    const message = error instanceof SignError ? error.message : (error as Error).message;
    const code = (error as { code?: string }).code ?? '';
    fail(
      code.startsWith('ERR_PARSE_ARGS')
        ? `${name}: ${message} (analytics-edge ${name} --help)`
        : message,
    );
  }
}

await main();
