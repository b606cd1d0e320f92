import { existsSync } from 'node:fs';
import { runOk } from './processes.ts';
import { fixturePath } from './scratch.ts';

// Debian's interpreter, where `apt-get install python3-jwt` puts PyJWT (a pyenv or venv python3
// earlier on PATH would not have it); PYTHON overrides.
const PYTHON =
  process.env.PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** A public id for `query`, minted by the Python host example with PyJWT. */
export async function pythonMintedId(query: string, signingKeys: string): Promise<string> {
  const minted = await runOk(PYTHON, [fixturePath('python-host/mint_id.py'), query], {
    cwd: fixturePath('python-host'),
    env: { EDGE_SIGNING_KEYS: signingKeys },
  });
  return minted.stdout.trim();
}
