import { type RollupSpec, rollupSpec } from '../storage/rollup-spec.ts';
import { UsageError } from './usage-error.ts';

type Options = Record<string, string | boolean | undefined>;

const list = (value: string | boolean | undefined) =>
  typeof value === 'string' ? value.split(',').map((name) => name.trim()) : [];

/**
 * What `--rollups`, `--rollup-keys KEY,…` and `--rollup-sums KEY,…` ask for: a spec (either
 * list implies `--rollups`), `true` for `--rollups` alone, or undefined without them.
 */
export function rollupsOption(options: Options): RollupSpec | true | undefined {
  const keys = options['rollup-keys'];
  const sums = options['rollup-sums'];
  if (keys === undefined && sums === undefined) return options.rollups === true ? true : undefined;
  try {
    return rollupSpec(list(keys), list(sums));
  } catch (error) {
    throw new UsageError(`--rollup-keys, --rollup-sums: ${(error as Error).message}`);
  }
}
