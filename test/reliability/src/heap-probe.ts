/**
 * The V8 heap of a server child process after a full collection, asked over its IPC channel.
 *
 * RSS over a short run mostly shows V8 sizing its heap (a Node process under steady load climbs
 * and falls by a fifth between collections, and keeps raising its heap limit for tens of
 * seconds), so it cannot tell a leak from a warm-up in a 12 s soak. The live heap after a forced
 * full collection can: it is what the process still holds. The child must run with
 * `--expose-gc` and an `ipc` stdio slot, and call {@link answerHeapProbes}.
 */
import type { ChildProcess } from 'node:child_process';

/** What a process holds after a full collection, in bytes (`process.memoryUsage()`). */
export interface HeapFigures {
  heapUsed: number;
  /** Memory of C++ objects bound to JS objects, Buffers included. */
  external: number;
}

const ASK = 'analytics-chart:heap-after-gc';

/** Child side: answers each probe with its memory after two full collections. */
export function answerHeapProbes(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!process.send || !gc) return;
  process.on('message', (message) => {
    if (message !== ASK) return;
    // Two passes: the first can leave objects that only a weak callback or finalizer frees.
    gc();
    gc();
    const { heapUsed, external } = process.memoryUsage();
    process.send?.({ ask: ASK, heapUsed, external } satisfies HeapFigures & { ask: string });
  });
  // The channel must not keep the process alive once its server has closed.
  process.channel?.unref();
}

/** Parent side: the child's heap after a full collection. */
export function heapAfterGc(child: ChildProcess, timeoutMs = 10_000): Promise<HeapFigures> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(
        new Error(`no heap figures within ${timeoutMs} ms (is the child run with --expose-gc?)`),
      );
    }, timeoutMs);
    const onMessage = (message: unknown) => {
      const m = message as Partial<HeapFigures> & { ask?: string };
      if (m?.ask !== ASK) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve({
        heapUsed: m.heapUsed ?? Number.NaN,
        external: m.external ?? Number.NaN,
      });
    };
    if (!child.send) {
      clearTimeout(timer);
      reject(new Error('the child has no IPC channel'));
      return;
    }
    child.on('message', onMessage);
    child.send(ASK);
  });
}
