import { describe, expect, test } from 'vitest';
import { GroupCommit } from '../src/ingest/group-commit.ts';

/** A commit function that records each group it is given and fails for items marked bad. */
function recorder(delayMs = 5) {
  const groups: string[][] = [];
  const commit = async (items: string[]) => {
    groups.push([...items]);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (items.some((item) => item.startsWith('bad'))) throw new Error(`refused ${items.join(',')}`);
  };
  return { groups, commit };
}

/** One commit at a time, of items of size 1, that gathers as `gather` says. */
function gathering(
  commit: (items: string[]) => Promise<void>,
  gather: { size: number; ms: number },
): GroupCommit<string> {
  return new GroupCommit(commit, { concurrency: 1, maxSize: 100, sizeOf: () => 1, gather });
}

/**
 * Submits `first` alone, then `ok1`, `bad` and `ok2` while it commits, so that those three form
 * one failing group; only `bad` must fail.
 */
async function submitWithCulprit(queue: GroupCommit<string>) {
  const outcomes = await Promise.allSettled(
    ['first', 'ok1', 'bad', 'ok2'].map((item) => queue.submit(item)),
  );
  expect(outcomes.map((o) => o.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ]);
  return outcomes;
}

describe('GroupCommit', () => {
  test('items arriving while a commit runs share the next one, in arrival order', async () => {
    const { groups, commit } = recorder();
    const queue = new GroupCommit(commit, { concurrency: 1, maxSize: 100, sizeOf: () => 1 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((item) => queue.submit(item)));
    expect(groups).toEqual([['a'], ['b', 'c', 'd', 'e']]);
  });

  test('a group never passes maxSize, but an item larger than it still goes alone', async () => {
    const { groups, commit } = recorder();
    const queue = new GroupCommit(commit, {
      concurrency: 1,
      maxSize: 5,
      sizeOf: (item: string) => item.length,
    });
    await Promise.all(['x', 'aa', 'bbb', 'cc', 'dddddddd', 'e'].map((item) => queue.submit(item)));
    expect(groups).toEqual([['x'], ['aa', 'bbb'], ['cc'], ['dddddddd'], ['e']]);
  });

  test('a failed group is retried item by item, so only the culprit fails', async () => {
    const { groups, commit } = recorder();
    const queue = new GroupCommit(commit, { concurrency: 1, maxSize: 100, sizeOf: () => 1 });
    const outcomes = await submitWithCulprit(queue);
    expect((outcomes[2] as PromiseRejectedResult).reason.message).toBe('refused bad');
    expect(groups).toEqual([['first'], ['ok1', 'bad', 'ok2'], ['ok1'], ['bad'], ['ok2']]);
  });

  test('runs up to `concurrency` commits at once, and idle waits for all of them', async () => {
    let running = 0;
    let most = 0;
    let done = 0;
    const queue = new GroupCommit(
      async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 10));
        running--;
        done++;
      },
      { concurrency: 2, maxSize: 1, sizeOf: () => 1 },
    );
    for (let i = 0; i < 6; i++) void queue.submit(i);
    await queue.idle();
    expect(done).toBe(6);
    expect(most).toBe(2);
    await queue.idle();
  });

  /**
   * Commits `a` and `b` alone, then `c`, `d` and `e` together, then submits `later` 3 ms apart:
   * the groups the queue made of them.
   */
  async function afterGroupOfThree(gather: { size: number; ms: number }, later: string[]) {
    const { groups, commit } = recorder();
    // A wait of the whole gathering time would outlast the test.
    const queue = gathering(commit, gather);
    for (const item of ['a', 'b']) await queue.submit(item);
    // Submitted while the commit of `b` is still finishing: they share the next one.
    await Promise.all(['c', 'd', 'e'].map((item) => queue.submit(item)));
    await Promise.all(
      later.map(async (item, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 3));
        await queue.submit(item);
      }),
    );
    return groups;
  }

  test('while writers are concurrent, the next commit waits until as many items as the last one carried are back; a lone writer never waits', async () => {
    const groups = await afterGroupOfThree({ size: 100, ms: 60_000 }, ['f', 'g', 'h']);
    expect(groups).toEqual([['a'], ['b'], ['c', 'd', 'e'], ['f', 'g', 'h']]);
  });

  test('items that arrived during a commit wait with the writers of that commit, so that they share the next one', async () => {
    const groups: string[][] = [];
    let during: Promise<void> | undefined;
    const queue = gathering(
      async (items) => {
        groups.push([...items]);
        // `x` arrives while `c`, `d` and `e` are being committed.
        if (items.includes('c')) during = queue.submit('x');
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
      { size: 100, ms: 60_000 },
    );
    for (const item of ['a', 'b']) await queue.submit(item);
    await Promise.all(['c', 'd', 'e'].map((item) => queue.submit(item)));
    await Promise.all([
      during,
      ...['f', 'g', 'h'].map(async (item, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 3));
        await queue.submit(item);
      }),
    ]);
    expect(groups).toEqual([['a'], ['b'], ['c', 'd', 'e'], ['x', 'f', 'g', 'h']]);
  });

  test('a commit that waits to gather goes once `size` has gathered', async () => {
    const groups = await afterGroupOfThree({ size: 2, ms: 60_000 }, ['f', 'g']);
    expect(groups).toEqual([['a'], ['b'], ['c', 'd', 'e'], ['f', 'g']]);
  });

  test('a commit that waits to gather starts once its time is over', async () => {
    const { groups, commit } = recorder();
    const queue = gathering(commit, { size: 100, ms: 20 });
    await Promise.all(['a', 'b', 'c'].map((item) => queue.submit(item)));
    // Never joined by another, `d` waits out the gathering time and goes.
    await queue.submit('d');
    await queue.idle();
    expect(groups).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  test('items of a failed group are retried alone at once, without waiting to gather', async () => {
    const { groups, commit } = recorder();
    const queue = gathering(commit, { size: 100, ms: 60_000 });
    await submitWithCulprit(queue);
    expect(groups).toEqual([['first'], ['ok1', 'bad', 'ok2'], ['ok1'], ['bad'], ['ok2']]);
  });
});
