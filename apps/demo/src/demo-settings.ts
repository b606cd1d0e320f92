import { describeZodError } from '@analytics-chart/protocol';
import * as z from 'zod';
import { repoPath } from './repo-paths.ts';

const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);

const settingsSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port(8787),
  EXAMPLES_PORT: port(8788),
  ENGINE_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  DEMO_DATA_DIR: z.string().min(1).optional(),
  DEMO_EVENTS: z.coerce.number().int().min(1).max(50_000_000).default(1_000_000),
  DEMO_DATA_MAX_AGE_HOURS: z.coerce.number().min(0).default(24),
  DEMO_PASSWORD: z.string().min(8).default('demo-password'),
  EDGE_SESSION_ID_TTL: z
    .string()
    .regex(/^\d+[smhdw]?$/)
    .default('10m'),
  COOKIE_SECURE: z.enum(['true', 'false']).default('false'),
  DEMO_LOG: z.enum(['info', 'warn']).default('warn'),
  DEMO_READY_JSON: z.enum(['1', '0']).default('0'),
  EDGE_REVOKED_IDS: z.string().optional(),
  EDGE_ALLOWED_ORIGINS: z.string().optional(),
});

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** The demo's settings, all optional: `pnpm start` needs no configuration. */
export interface DemoSettings {
  host: string;
  port: number;
  /** True when PORT was not set, so a busy default port may fall back to a free one. */
  portIsDefault: boolean;
  examplesPort: number;
  examplesPortIsDefault: boolean;
  /** Also serve the engine's HTTP API (for the Workers example, and the tests); off by default. */
  enginePort: number | undefined;
  dataDir: string;
  events: number;
  dataMaxAgeHours: number;
  /** `--fresh`: regenerate the demo data now. */
  fresh: boolean;
  demoPassword: string;
  /** Lifetime of the ids minted for each dashboard view. */
  idTtl: string;
  secureCookies: boolean;
  /** `info` also logs every signed and renewed id; `warn` only refusals and failures. */
  logLevel: 'info' | 'warn';
  /** Print one machine-readable line `{"ready": …}` once serving (the tests read it). */
  readyJson: boolean;
  /** Ids refused from the start, by jti (`EDGE_REVOKED_IDS`). */
  revokedIds: string[];
  /** Origins whose pages may call the edge from the browser (`EDGE_ALLOWED_ORIGINS`). */
  allowedOrigins: string[];
}

/** Reads the settings from the environment and the command line, naming the first bad one. */
export function demoSettings(env: NodeJS.ProcessEnv, argv: readonly string[]): DemoSettings {
  const unknown = argv.filter((arg) => arg !== '--fresh');
  if (unknown.length) throw new Error(`unknown argument ${unknown[0]}; the only one is --fresh`);
  const blank = Object.fromEntries(
    Object.keys(settingsSchema.shape).map((name) => [name, env[name]?.trim() || undefined]),
  );
  const parsed = settingsSchema.safeParse(blank);
  if (!parsed.success) throw new Error(describeZodError(parsed.error));
  const s = parsed.data;
  return {
    host: s.HOST,
    port: s.PORT,
    portIsDefault: blank.PORT === undefined,
    examplesPort: s.EXAMPLES_PORT,
    examplesPortIsDefault: blank.EXAMPLES_PORT === undefined,
    enginePort: s.ENGINE_PORT,
    dataDir: s.DEMO_DATA_DIR ?? repoPath('.data'),
    events: s.DEMO_EVENTS,
    dataMaxAgeHours: s.DEMO_DATA_MAX_AGE_HOURS,
    fresh: argv.includes('--fresh'),
    demoPassword: s.DEMO_PASSWORD,
    idTtl: s.EDGE_SESSION_ID_TTL,
    secureCookies: s.COOKIE_SECURE === 'true',
    logLevel: s.DEMO_LOG,
    readyJson: s.DEMO_READY_JSON === '1',
    revokedIds: list(s.EDGE_REVOKED_IDS),
    // Public embeds on any origin by default (the example pages live on another origin).
    allowedOrigins: s.EDGE_ALLOWED_ORIGINS === undefined ? ['*'] : list(s.EDGE_ALLOWED_ORIGINS),
  };
}
