import { parentPort } from 'node:worker_threads';
import { type ChunkJob, type ParsedChunk, parseChunk } from './ndjson-chunk.ts';

/** What a parse worker answers: the parsed chunk, or why it could not be parsed. */
export type ChunkReply = ParsedChunk | { id: number; error: string };

// The body of a loader parse worker (started directly when built, through `ndjson-worker.cjs` from source): one chunk per message.
const port = parentPort;
if (port) {
  port.on('message', (job: ChunkJob) => {
    let reply: ChunkReply;
    try {
      reply = parseChunk(job);
    } catch (error) {
      reply = { id: job.id, error: error instanceof Error ? error.message : String(error) };
    }
    // The chunk's buffer goes back to be read into again.
    port.postMessage(reply, 'buffer' in reply && reply.buffer ? [reply.buffer] : []);
  });
}
