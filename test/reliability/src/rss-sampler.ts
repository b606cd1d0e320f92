/** Resident set size of a process, read from `/proc/<pid>/status` (Linux), sampled over time. */
import { readFileSync } from 'node:fs';

/** The process's RSS in bytes, or null when it is gone. */
export function rssOf(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/** One sample: milliseconds since sampling began, and the RSS in bytes. */
export interface RssSample {
  atMs: number;
  rss: number;
}

/** Samples `pid` every `everyMs` until stopped; `stop()` returns the samples. */
export function sampleRss(pid: number, everyMs = 1000): { stop(): RssSample[] } {
  const started = Date.now();
  const samples: RssSample[] = [];
  const take = () => {
    const rss = rssOf(pid);
    if (rss !== null) samples.push({ atMs: Date.now() - started, rss });
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/**
 * The lowest RSS of the samples: the level the garbage collector brings the heap back to. Under
 * steady load a Node process's RSS climbs and falls by a fifth as V8 grows its heap between
 * collections (145-173 MB for the edge within 40 s, with no trend), so a median of a few seconds
 * lands wherever the cycle happens to be; what a leak raises is the level after collection.
 */
export function lowestRss(samples: readonly RssSample[]): number {
  return samples.length ? Math.min(...samples.map((s) => s.rss)) : Number.NaN;
}
