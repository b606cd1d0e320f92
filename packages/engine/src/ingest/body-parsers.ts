import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { EngineError } from '../engine-error.ts';
import { unpackBody } from './body-message.ts';
import type { BodyJob, BodyReply } from './body-worker.ts';
import { type IngestBody, type IngestKind, parseIngestBody } from './ingest-body.ts';

/** Bodies up to this size are parsed on the calling thread, where a thread hop costs more. */
export const INLINE_BODY_BYTES = 64 * 1024;

/** Bodies waiting for a worker, at most (past it, or past the bytes, a request gets a 503). */
export const MAX_QUEUED_BODIES = 64;

/** Bytes of bodies waiting for a worker, at most (one body is always taken when none waits). */
export const MAX_QUEUED_BODY_BYTES = 64 * 1024 * 1024;

/** Why a body is refused when the queue is full. */
export const BODIES_QUEUE_FULL = 'the engine is busy parsing other requests; try again';

/** Body workers by default: all cores but the one that serves requests, at most two. */
export function defaultBodyWorkers(): number {
  return Math.min(2, Math.max(1, availableParallelism() - 1));
}

// Run from source (tests, `pnpm engine`), a worker thread does not inherit the TypeScript loader,
// so it starts through a shim that registers tsx; the built package starts the compiled body.
const WORKER_FILE = import.meta.url.endsWith('.ts')
  ? new URL('./body-worker.cjs', import.meta.url)
  : new URL('./body-worker.js', import.meta.url);

interface Job {
  message: BodyJob;
  resolve(body: IngestBody): void;
  reject(error: Error): void;
}

/**
 * Decodes, parses and checks the bodies of the ingest endpoints. A large body costs
 * milliseconds of decoding, JSON parsing and checks; done on the main thread, every other
 * request (every writer of every workspace) would wait behind it. So bodies past
 * {@link INLINE_BODY_BYTES} go to a few worker threads, one body each at a time, the rest waiting
 * in a bounded queue. Both paths run {@link parseIngestBody}.
 */
export class BodyParsers {
  readonly #idle: Worker[] = [];
  readonly #busy = new Map<Worker, Job>();
  readonly #queue: Job[] = [];
  readonly #live = new Set<Worker>();
  #queuedBytes = 0;
  #nextId = 0;
  #closed = false;

  /**
   * `workers` 0 parses every body on the calling thread; `bounds` are what may wait (default
   * {@link MAX_QUEUED_BODIES} bodies and {@link MAX_QUEUED_BODY_BYTES} bytes).
   */
  constructor(
    readonly workers: number,
    readonly bounds = { bodies: MAX_QUEUED_BODIES, bytes: MAX_QUEUED_BODY_BYTES },
  ) {}

  /**
   * What `bytes` hold as the body of `kind`, arrived at `now`. A body large enough for a worker
   * has its buffer handed over (detached here). Rejects with a 503 {@link EngineError} when too
   * many bodies wait already.
   */
  parse(kind: IngestKind, bytes: Uint8Array, now: number): Promise<IngestBody> {
    if (this.workers === 0 || this.#closed || bytes.length <= INLINE_BODY_BYTES) {
      try {
        return Promise.resolve(parseIngestBody(kind, bytes, now));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (
      this.#queue.length >= this.bounds.bodies ||
      (this.#queue.length > 0 && this.#queuedBytes + bytes.length > this.bounds.bytes)
    ) {
      return Promise.reject(new EngineError(503, BODIES_QUEUE_FULL));
    }
    // A view on part of a buffer (or on a shared one) is copied: only a whole buffer is handed over.
    const own =
      bytes.byteOffset === 0 &&
      bytes.byteLength === bytes.buffer.byteLength &&
      bytes.buffer instanceof ArrayBuffer
        ? bytes
        : bytes.slice();
    return new Promise((resolve, reject) => {
      this.#queue.push({ message: { id: this.#nextId++, kind, bytes: own, now }, resolve, reject });
      this.#queuedBytes += own.length;
      this.#dispatch();
    });
  }

  /**
   * Starts the workers ahead of the first large body, which would otherwise wait for a thread to
   * start and load its modules. Idle workers never keep the process alive.
   */
  start(): void {
    while (!this.#closed && this.#live.size < this.workers) this.#idle.push(this.#start());
  }

  /** Stops the workers; later bodies are parsed on the calling thread. */
  async close(): Promise<void> {
    this.#closed = true;
    const stopped = new Error('the body workers were closed');
    for (const job of this.#queue.splice(0)) job.reject(stopped);
    for (const job of this.#busy.values()) job.reject(stopped);
    const workers = [...this.#live];
    this.#live.clear();
    this.#idle.length = 0;
    this.#busy.clear();
    await Promise.all(workers.map((w) => w.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker =
        this.#idle.pop() ?? (this.#live.size < this.workers ? this.#start() : undefined);
      if (!worker) return;
      const job = this.#queue.shift() as Job;
      this.#queuedBytes -= job.message.bytes.length;
      this.#busy.set(worker, job);
      worker.ref();
      worker.postMessage(job.message, [job.message.bytes.buffer as ArrayBuffer]);
    }
  }

  #start(): Worker {
    // A parsed body's objects die at once: a larger young generation lets them die there.
    const worker = new Worker(WORKER_FILE, { resourceLimits: { maxYoungGenerationSizeMb: 48 } });
    this.#live.add(worker);
    worker.unref();
    worker.on('message', (reply: BodyReply) => {
      const job = this.#busy.get(worker);
      this.#busy.delete(worker);
      // An idle worker never keeps the process alive.
      worker.unref();
      this.#idle.push(worker);
      if ('error' in reply) job?.reject(new Error(`parsing a request body failed: ${reply.error}`));
      else job?.resolve(unpackBody(reply.body));
      this.#dispatch();
    });
    const lost = (error: Error) => {
      if (!this.#live.delete(worker)) return;
      const job = this.#busy.get(worker);
      this.#busy.delete(worker);
      const idle = this.#idle.indexOf(worker);
      if (idle >= 0) this.#idle.splice(idle, 1);
      if (this.#closed) return;
      job?.reject(error);
      void worker.terminate();
      // The next body starts a new worker in its place.
      this.#dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`a body worker exited (code ${code})`)));
    return worker;
  }
}
