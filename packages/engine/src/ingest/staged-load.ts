import type { CollectionEntry } from '../storage/duckdb/catalog.ts';
import { addKeyColumns, needsKeyColumns } from '../storage/duckdb/key-typing.ts';
import type { SqlParams } from '../storage/duckdb/sql-params.ts';
import type { WorkspaceDb } from '../storage/duckdb/workspace-db.ts';
import type { SeenKey } from './discover-keys.ts';
import { type StagedFile, stagedFilesRelation } from './event-records.ts';

/** The staged events bound for one segment of the collection, in file order. */
export interface StagedSegment {
  /** Every key path their chunks hold (the union of the chunks' key discovery). */
  keys: SeenKey[];
  events: number;
  /**
   * The `(ts, payload, ord)` relation of the segment's staged files, `ord` counting from `base`
   * in file order, or about `limit` of them, the first of each file, adding its own parameters.
   */
  source: (params: SqlParams, options: { base: number } | { limit: number }) => string;
  /** The same events in consecutive runs of staged files of at most {@link RUN_BYTES} each. */
  runs: Array<Pick<StagedSegment, 'events' | 'source'>>;
}

/**
 * Staged bytes sorted in one statement, at most (a single larger file makes a run alone): the
 * sort of a whole large load in one statement outgrows the load's memory limit, and a run of
 * this size sorts within it with room for the insert's own buffers.
 */
export const RUN_BYTES = 128 * 1024 * 1024;

/**
 * A load's checked events, left in the loader's staged files instead of appended, for one
 * statement to type and sort them straight into the collection
 * (`storage/duckdb/cluster-rows.ts`, `appendStaged`): every row is written once, compressed
 * once, and a load stopped before that statement commits leaves the collection's rows as they
 * were. The collection's schema grows as the chunks need, as with appended events, each change
 * committed on its own; a chunk goes to the segment that was last when it arrived.
 */
export class StagedLoad {
  readonly #db: WorkspaceDb;
  readonly #collection: string;
  readonly #segments = new Map<number, { files: StagedFile[]; keys: Map<string, SeenKey> }>();
  readonly #runBytes: number;

  /** `options.runBytes`: the staged bytes of one sorted run (default {@link RUN_BYTES}). */
  constructor(db: WorkspaceDb, collection: string, options: { runBytes?: number } = {}) {
    this.#db = db;
    this.#collection = collection;
    this.#runBytes = options.runBytes ?? RUN_BYTES;
  }

  /** Takes a checked chunk's staged file, after making the schema change its keys need. */
  async add(chunk: StagedFile & { keys: SeenKey[] }): Promise<void> {
    let entry = this.#db.catalog.get(this.#collection);
    if (!entry || needsKeyColumns(entry, chunk.keys)) {
      await this.#db.write(async (tx) => {
        await addKeyColumns(tx, await tx.collection(this.#collection), chunk.keys);
      });
      entry = this.#db.catalog.get(this.#collection) as CollectionEntry;
    }
    const n = entry.segments.length - 1;
    let segment = this.#segments.get(n);
    if (!segment) {
      segment = { files: [], keys: new Map() };
      this.#segments.set(n, segment);
    }
    segment.files.push({
      file: chunk.file,
      longest: chunk.longest,
      events: chunk.events,
      bytes: chunk.bytes,
    });
    for (const key of chunk.keys) {
      const path = JSON.stringify(key.path);
      if (!segment.keys.has(path)) segment.keys.set(path, key);
    }
  }

  /** The staged events by segment number. */
  segments(): Map<number, StagedSegment> {
    const out = new Map<number, StagedSegment>();
    for (const [n, { files, keys }] of this.#segments) {
      out.set(n, {
        keys: [...keys.values()],
        ...stagedRun(files),
        runs: runsOf(files, this.#runBytes).map(stagedRun),
      });
    }
    return out;
  }
}

/** The events and relation of staged files read in the order given. */
function stagedRun(files: StagedFile[]): Pick<StagedSegment, 'events' | 'source'> {
  return {
    events: files.reduce((sum, f) => sum + f.events, 0),
    source: (params, options) => stagedFilesRelation(files, params, options),
  };
}

/** `files` cut into consecutive runs of at most `limit` staged bytes. */
function runsOf(files: readonly StagedFile[], limit: number): StagedFile[][] {
  const runs: StagedFile[][] = [];
  let bytes = Number.POSITIVE_INFINITY;
  for (const f of files) {
    if (bytes + f.bytes > limit) {
      runs.push([]);
      bytes = 0;
    }
    (runs.at(-1) as StagedFile[]).push(f);
    bytes += f.bytes;
  }
  return runs;
}
