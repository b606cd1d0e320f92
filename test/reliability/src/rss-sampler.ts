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
