import { parentPort } from 'node:worker_threads';
import { type IngestBody, type IngestKind, parseIngestBody } from './ingest-body.ts';

/** A body for a worker: its bytes (the buffer is handed over) and when it arrived. */
export interface BodyJob {
  id: number;
  kind: IngestKind;
  bytes: Uint8Array;
  now: number;
}

/** What a body worker answers: what the body holds, or why parsing it failed. */
export type BodyReply = { id: number; body: IngestBody } | { id: number; error: string };

// The body of an ingest body worker (started directly when built, through `body-worker.cjs` from
// source): one request body per message.
const port = parentPort;
if (port) {
  port.on('message', (job: BodyJob) => {
    let reply: BodyReply;
    try {
      reply = { id: job.id, body: parseIngestBody(job.kind, job.bytes, job.now) };
    } catch (error) {
      reply = { id: job.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply);
  });
}
