import { copyFileSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { REPO } from './pack.ts';
import { runOk } from './processes.ts';
import { fixturePath } from './scratch.ts';

// Debian's golang-go (.ci/run installs it); GO overrides.
const GO = process.env.GO ?? 'go';

/**
 * A public id for `query`, minted by the Go host example with the documented Go file
 * (docs/query-id/mint_query_id.go), both copied into a module in the suite's scratch directory.
 */
export async function goMintedId(query: string, signingKeys: string): Promise<string> {
  const dir = join(inject('consumer').root, 'go-host');
  cpSync(fixturePath('go-host'), dir, { recursive: true });
  mkdirSync(join(dir, 'queryid'), { recursive: true });
  copyFileSync(join(REPO, 'docs/query-id/mint_query_id.go'), join(dir, 'queryid/mint_query_id.go'));
  const minted = await runOk(GO, ['run', '.', query], {
    cwd: dir,
    // The standard library only: nothing is fetched. One build cache for every run (the edge's
    // vector test shares it), so the standard library is compiled once per machine.
    env: {
      EDGE_SIGNING_KEYS: signingKeys,
      GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'analytics-chart-go-cache'),
      GOPROXY: 'off',
      GOFLAGS: '-mod=mod',
    },
  });
  return minted.stdout.trim();
}
