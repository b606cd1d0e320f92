/**
 * A Cumulative Line's percentiles, the same for every driver: each driver's statement gives each
 * bucket's values, and the percentile over the growing frame (the window's start to each
 * bucket's end) follows here with the number rule's one formula, so that both drivers and the
 * non-growing percentiles of their SQL give the same bits. Pure: no SQL and no storage.
 */

/**
 * The number rule's percentile (docs/query-semantics.md) between the two closest ranks `lo` ≤
 * `hi` at distance `d` = h − ⌊h⌋ from `lo`: lo + d·(hi − lo), or lo·(1 − d) + hi·d where
 * hi − lo is beyond the doubles. Both drivers' SQL writes the same steps.
 */
export function interpolate(lo: number, hi: number, d: number): number {
  const near = lo + d * (hi - lo);
  return Number.isFinite(near) ? near : lo * (1 - d) + hi * d;
}

/**
 * The percentile at `level` of `n` values from their two closest ranks as a statement selected
 * them, `lo` = x[⌊h⌋] and `hi` = x[⌈h⌉] of the sorted values, h = level·(n − 1) as a double.
 */
export function percentileOfRanks(level: number, n: number, lo: number, hi: number): number {
  const h = level * (n - 1);
  return interpolate(lo, hi, h - Math.floor(h));
}

/**
 * The percentile at `level` over the growing frame for each bucket, in bucket order: over the
 * values of that bucket and every one before it (`values[i]`, bucket i's numeric values in any
 * order); null until the frame holds a value.
 */
export function growingPercentiles(
  level: number,
  values: readonly (readonly number[])[],
): (number | null)[] {
  const total = values.reduce((n, v) => n + v.length, 0);
  // The frame split in two: its ⌊h⌋ + 1 smallest values, and the others.
  const low = new Heap(total, true);
  const high = new Heap(total, false);
  return values.map((bucket) => {
    for (const x of bucket) {
      if (low.size > 0 && x < low.top()) low.push(x);
      else high.push(x);
    }
    const n = low.size + high.size;
    if (n === 0) return null;
    // The SQL's steps: h as a double, the ranks ⌊h⌋ and ⌈h⌉ (0-based), d = h − ⌊h⌋.
    const h = level * (n - 1);
    const rank = Math.floor(h);
    while (low.size > rank + 1) high.push(low.pop());
    while (low.size < rank + 1) low.push(high.pop());
    const lo = low.top();
    return interpolate(lo, Math.ceil(h) === rank ? lo : high.top(), h - rank);
  });
}

/** A binary heap of doubles of fixed capacity: the largest on top (`max`) or the smallest. */
class Heap {
  private readonly items: Float64Array;
  size = 0;

  constructor(
    capacity: number,
    private readonly max: boolean,
  ) {
    this.items = new Float64Array(Math.max(1, capacity));
  }

  /** Whether `a` belongs above `b`. */
  private above(a: number, b: number): boolean {
    return this.max ? a > b : a < b;
  }

  top(): number {
    return this.items[0] as number;
  }

  push(x: number): void {
    const items = this.items;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent] as number;
      if (!this.above(x, p)) break;
      items[i] = p;
      i = parent;
    }
    items[i] = x;
  }

  pop(): number {
    const items = this.items;
    const top = items[0] as number;
    const last = items[--this.size] as number;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      const right = child + 1;
      if (right < this.size && this.above(items[right] as number, items[child] as number))
        child = right;
      if (!this.above(items[child] as number, last)) break;
      items[i] = items[child] as number;
      i = child;
    }
    items[i] = last;
    return top;
  }
}
