import type { FileHandle } from 'node:fs/promises';

/** Reading an NDJSON file in chunks of whole lines, for the loaders (into DuckDB and ClickHouse). */

const NEWLINE = 0x0a;

/**
 * Chunk buffers handed back by the parsers once a chunk is staged, to read the next chunks into,
 * because freshly mapped memory takes a page fault on every first touch of a page.
 */
export class ChunkBuffers {
  readonly #free: ArrayBuffer[] = [];

  constructor(readonly chunkBytes: number) {}

  /** A buffer of at least `bytes`. */
  take(bytes: number): Buffer {
    const i = this.#free.findIndex((b) => b.byteLength >= bytes);
    const buffer =
      i === -1
        ? new ArrayBuffer(Math.max(bytes, this.chunkBytes + 64 * 1024))
        : (this.#free.splice(i, 1)[0] as ArrayBuffer);
    return Buffer.from(buffer);
  }

  give(buffer: ArrayBuffer | undefined): void {
    if (buffer && buffer.byteLength > 0) this.#free.push(buffer);
  }
}

/**
 * The file in chunks of whole lines (a line longer than a chunk is read whole), with the byte
 * order mark at its start dropped. The first chunks are small and grow to `chunkBytes`, so that
 * DuckDB gets its first events soon instead of waiting for a whole chunk to be parsed. Each
 * chunk is a view of a buffer of its own from `buffers`, which the parser may take over.
 */
export async function* fileChunks(
  handle: FileHandle,
  buffers: ChunkBuffers,
): AsyncGenerator<{ bytes: Uint8Array; bytesRead: number }> {
  const { chunkBytes } = buffers;
  let position = 0;
  let carry: Buffer = Buffer.alloc(0);
  let size = Math.min(chunkBytes, 1024 * 1024);
  for (; ; size = Math.min(chunkBytes, size * 2)) {
    const buffer = buffers.take(carry.length + size);
    carry.copy(buffer, 0);
    const { bytesRead } = await handle.read(buffer, carry.length, size, position);
    let data = buffer.subarray(0, carry.length + bytesRead);
    if (position === 0 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
      data = data.subarray(3);
    }
    position += bytesRead;
    if (bytesRead === 0) {
      if (data.length > 0) yield { bytes: data, bytesRead: position };
      else buffers.give(buffer.buffer as ArrayBuffer);
      return;
    }
    const cut = data.lastIndexOf(NEWLINE);
    carry = Buffer.from(data.subarray(cut + 1));
    if (cut === -1) {
      buffers.give(buffer.buffer as ArrayBuffer);
      continue;
    }
    yield { bytes: data.subarray(0, cut + 1), bytesRead: position };
  }
}
