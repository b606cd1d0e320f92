/**
 * `sharedLoad`'s interleavings between replicas, scripted step by step on a store whose reads
 * and locks answer as another replica's progress dictates (the Redis store's own behaviour is
 * tested in redis-store.test.ts).
 */

import { describe, expect, it } from 'vitest';
import { sharedLoad } from '../src/backend/shared-load.ts';
import type { LoadedResult } from '../src/protection/result-cache.ts';
import type { SharedResult, SharedResults } from '../src/store/edge-store.ts';

const answer = (value: number): LoadedResult => ({
  envelope: { result: value, metadata: {} } as unknown as LoadedResult['envelope'],
  window: undefined,
});

/** A shared store where another replica holds the lock until `finish` is called. */
function heldByAnother() {
  const results = new Map<string, SharedResult>();
  let held = true;
  const calls: string[] = [];
  const shared: SharedResults = {
    async read(key) {
      calls.push('read');
      return results.get(key);
    },
    async write(key, result) {
      calls.push('write');
      results.set(key, result);
    },
    async lock() {
      calls.push('lock');
      if (held) return false;
      held = true;
      return true;
    },
    async unlock() {
      calls.push('unlock');
      held = false;
    },
  };
  const finish = (key: string, value: number, fetchedAt = Date.now()) => {
    results.set(key, { ...answer(value), fetchedAt });
    held = false;
  };
  return { shared, finish, calls };
}

describe('sharedLoad', () => {
  it("uses the holder's answer when the holder stored it and let go between a look and a lock", async () => {
    const { shared, finish } = heldByAnother();
    let looks = 0;
    const read = shared.read.bind(shared);
    // The holder finishes right after this replica's second look found nothing.
    shared.read = async (key) => {
      const found = await read(key);
      if (++looks === 2) finish(key, 7);
      return found;
    };
    let loads = 0;
    const got = await sharedLoad(shared, 'k', 1000, 0, async () => {
      loads++;
      return answer(8);
    });
    expect(loads).toBe(0);
    expect(got.envelope.result).toBe(7);
  });

  it('uses an answer loaded after the request arrived, even once its freshness window has passed', async () => {
    const { shared, finish } = heldByAnother();
    const asked = Date.now();
    // The holder's answer arrives, but this replica only looks again after the 50 ms window.
    setTimeout(() => finish('k', 7, asked + 1), 0);
    const read = shared.read.bind(shared);
    let first = true;
    shared.read = async (key) => {
      if (!first) await new Promise((r) => setTimeout(r, 80));
      first = false;
      return read(key);
    };
    let loads = 0;
    const got = await sharedLoad(shared, 'k', 50, 0, async () => {
      loads++;
      return answer(8);
    });
    expect(loads).toBe(0);
    expect(got.envelope.result).toBe(7);
  });

  it('loads again when the only answer is older than both the request and its window', async () => {
    const { shared, finish, calls } = heldByAnother();
    finish('k', 7, Date.now() - 5000);
    let loads = 0;
    const got = await sharedLoad(shared, 'k', 1000, 60_000, async () => {
      loads++;
      return answer(8);
    });
    expect(loads).toBe(1);
    expect(got.envelope.result).toBe(8);
    expect(calls.slice(-2)).toEqual(['write', 'unlock']);
  });

  it('loads by itself when the store fails', async () => {
    const { shared } = heldByAnother();
    shared.read = async () => {
      throw new Error('down');
    };
    const got = await sharedLoad(shared, 'k', 1000, 0, async () => answer(8));
    expect(got.envelope.result).toBe(8);
  });
});
