import type { ChildProcess } from 'node:child_process';

/** Resolves with the URL a child server prints (`listening on <url>`) once it listens. */
export function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}
