import { describe, expect, it } from 'vitest';
import { entityTag } from '../src/http/entity-tag.ts';
import { etagMatches } from '../src/http/respond.ts';
import { Lru } from '../src/protection/lru.ts';
import { memoryRateLimitStore } from '../src/protection/rate-limit.ts';
import { ResultCache } from '../src/protection/result-cache.ts';

describe('token buckets', () => {
  it('allows a burst, refuses the next, refills at the rate', () => {
    const store = memoryRateLimitStore();
    const rule = { perSecond: 2, burst: 3 };
    const t = 1_000_000;
    const answers = [0, 1, 2, 3].map(() => store.take('k', rule, t));
    expect(answers.map((a) => (a as { allowed: boolean }).allowed)).toEqual([
      true,
      true,
      true,
      false,
    ]);
    // One token refills after 500 ms at 2 per second; the refusal said to wait 1 s (rounded up).
    expect((answers[3] as { retryAfterSeconds: number }).retryAfterSeconds).toBe(1);
    expect((store.take('k', rule, t + 499) as { allowed: boolean }).allowed).toBe(false);
    expect((store.take('k', rule, t + 1000) as { allowed: boolean }).allowed).toBe(true);
    // Other keys have their own buckets.
    expect((store.take('other', rule, t) as { allowed: boolean }).allowed).toBe(true);
    // A slow rule says how many seconds until the next token.
    const slow = { perSecond: 0.1, burst: 1 };
    store.take('slow', slow, t);
    expect(store.take('slow', slow, t)).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });
});

describe('Lru', () => {
  it('keeps at most maxEntries and never forgets what was used recently', () => {
    const lru = new Lru<number, number>(10);
    for (let i = 0; i < 100; i++) {
      lru.set(i, i);
      lru.get(0); // keeps 0 alive by use
      expect(lru.size).toBeLessThanOrEqual(10);
    }
    expect(lru.get(0)).toBe(0);
    expect(lru.get(99)).toBe(99);
    expect(lru.get(98)).toBe(98);
    expect(lru.get(50)).toBeUndefined();
    lru.delete(99);
    expect(lru.get(99)).toBeUndefined();
  });
});

describe('entity tags', () => {
  it('are equal for equal bytes, differ for any change, and match If-None-Match lists', () => {
    const a = new TextEncoder().encode('{"labels":["a"],"series":[1]}');
    const b = new TextEncoder().encode('{"labels":["a"],"series":[2]}');
    expect(entityTag(a)).toBe(entityTag(a.slice()));
    expect(entityTag(a)).not.toBe(entityTag(b));
    const tags = new Set<string>();
    for (let i = 0; i < 2000; i++) tags.add(entityTag(new TextEncoder().encode(`{"n":${i}}`)));
    expect(tags.size).toBe(2000);
    const tag = entityTag(a);
    expect(etagMatches(tag, tag)).toBe(true);
    expect(etagMatches(`W/${tag}`, tag)).toBe(true);
    expect(etagMatches(`"x", ${tag}`, tag)).toBe(true);
    expect(etagMatches('*', tag)).toBe(true);
    expect(etagMatches('"x"', tag)).toBe(false);
  });
});

describe('result cache', () => {
  const envelope = { result: [{ Count: 1 }], metadata: {} };

  it('coalesces concurrent loads and serves fresh entries without loading', async () => {
    let now = 0;
    const cache = new ResultCache(10, () => now);
    let loads = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const load = async () => {
      loads++;
      await gate;
      return { envelope, window: undefined };
    };
    const pending = Array.from({ length: 10 }, () => cache.get('k', 1000, 0, load));
    release();
    const outcomes = await Promise.all(pending);
    expect(loads).toBe(1);
    expect(new Set(outcomes.map((o) => o.entry)).size).toBe(1);
    now = 999;
    expect(cache.peek('k')).toBe(outcomes[0]?.entry);
    now = 1000;
    expect(cache.peek('k')).toBeUndefined();
  });

  it('falls back to the stale entry within stale-if-error, and fails after it', async () => {
    let now = 0;
    const cache = new ResultCache(10, () => now);
    const first = await cache.get('k', 1000, 5000, async () => ({ envelope, window: undefined }));
    now = 2000;
    const failing = async () => {
      throw new Error('backend down');
    };
    const stale = await cache.get('k', 1000, 5000, failing);
    expect(stale).toMatchObject({ stale: true, entry: first.entry });
    expect((stale.error as Error).message).toBe('backend down');
    now = 6001;
    await expect(cache.get('k', 1000, 5000, failing)).rejects.toThrow('backend down');
  });
});
