import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { type ChunkJob, type ParsedChunk, parseChunk } from './ndjson-chunk.ts';
import type { ChunkReply } from './ndjson-worker.ts';

/** Parse workers by default: one per core, at most four (DuckDB needs the cores too). */
export function defaultParseWorkers(): number {
  return Math.min(4, Math.max(1, availableParallelism()));
}

// Run from source (tests, `pnpm engine`), a worker thread does not inherit the TypeScript loader,
// so it starts through a shim that registers tsx; the built package starts the compiled body.
const WORKER_FILE = import.meta.url.endsWith('.ts')
  ? new URL('./ndjson-worker.cjs', import.meta.url)
  : new URL('./ndjson-worker.js', import.meta.url);

interface Waiting {
  resolve(chunk: ParsedChunk): void;
  reject(error: Error): void;
}

/**
 * The loader's parse workers. Checking and parsing lines in JavaScript (the same code as the
 * HTTP endpoints, so a line is accepted exactly when `/api/log` would accept it) costs more than
 * DuckDB's typed insert; spread over worker threads it keeps every core busy. Chunks go to the
 * workers in turn; each answer resolves its own promise, so callers take results in file order.
 * With zero workers, chunks are parsed on the calling thread.
 */
export class NdjsonParsers {
  readonly #workers: Worker[] = [];
  readonly #waiting = new Map<number, Waiting>();
  #failure: Error | undefined;

  constructor(readonly count: number) {
    for (let i = 0; i < count; i++) {
      // A parsed line's objects die at once: a larger young generation lets them die there.
      const worker = new Worker(WORKER_FILE, {
        resourceLimits: { maxYoungGenerationSizeMb: 48 },
      });
      worker.on('message', (reply: ChunkReply) => {
        const waiting = this.#waiting.get(reply.id);
        this.#waiting.delete(reply.id);
        if ('error' in reply) waiting?.reject(new Error(`parsing a chunk failed: ${reply.error}`));
        else waiting?.resolve(reply);
      });
      worker.on('error', (error) => this.#fail(error));
      worker.on('exit', (code) => {
        if (this.#waiting.size > 0) this.#fail(new Error(`a parse worker exited (code ${code})`));
      });
      this.#workers.push(worker);
    }
  }

  /**
   * Parses a chunk (see {@link parseChunk}). The buffer of `job.bytes` is handed over to the
   * worker (detached here) and comes back as the answer's `buffer`.
   */
  parse(job: ChunkJob): Promise<ParsedChunk> {
    if (this.#failure) return Promise.reject(this.#failure);
    const worker = this.#workers[job.id % this.#workers.length];
    if (!worker) return Promise.resolve().then(() => parseChunk(job));
    return new Promise((resolve, reject) => {
      this.#waiting.set(job.id, { resolve, reject });
      worker.postMessage(job, [job.bytes.buffer as ArrayBuffer]);
    });
  }

  /** Stops the workers; chunks still being parsed are abandoned. */
  async close(): Promise<void> {
    this.#failure ??= new Error('the parse workers were closed');
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}
