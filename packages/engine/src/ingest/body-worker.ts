import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { type PackedBody, packBody } from './body-message.ts';
import { type IngestKind, parseIngestBody } from './ingest-body.ts';

/** A body for a worker: its bytes (the buffer is handed over) and when it arrived. */
export interface BodyJob {
  id: number;
  kind: IngestKind;
  bytes: Uint8Array;
  now: number;
}

/** What a body worker answers: what the body holds, or why parsing it failed. */
export type BodyReply = { id: number; body: PackedBody } | { id: number; error: string };

/** The niceness of a body worker's thread: a busy core runs the serving thread first. */
const BODY_WORKER_NICENESS = 10;

// The body of an ingest body worker (started directly when built, through `body-worker.cjs` from
// source): one request body per message.
const port = parentPort;
if (port) {
  yieldToOtherThreads();
  port.on('message', (job: BodyJob) => {
    let reply: BodyReply;
    try {
      reply = { id: job.id, body: packBody(parseIngestBody(job.kind, job.bytes, job.now)) };
    } catch (error) {
      reply = { id: job.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply);
  });
}

/**
 * Lowers this thread's scheduling priority (Linux sets niceness per thread, named by its id in
 * `/proc/thread-self`), so that parsing large bodies takes only the CPU the main thread, which
 * answers every other writer, leaves over. Elsewhere the worker keeps the process's priority.
 */
function yieldToOtherThreads(): void {
  try {
    const thread = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(thread) && thread > 0) setPriority(thread, BODY_WORKER_NICENESS);
  } catch {
    // No /proc, or not allowed: the worker runs at the process's priority.
  }
}
