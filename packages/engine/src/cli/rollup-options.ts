import { type RollupReads, type RollupSpec, rollupSpec } from '../storage/rollup-spec.ts';
import { UsageError } from './usage-error.ts';

type Options = Record<string, string | boolean | undefined>;

const list = (value: string | boolean | undefined) =>
  typeof value === 'string' ? value.split(',').map((name) => name.trim()) : [];

/** The word in `--rollup-keys` that lets the engine add the keys and sums queries use. */
const AUTO = 'auto';

/**
 * What `--rollups`, `--rollup-keys KEY,…` and `--rollup-sums KEY,…` ask for: a spec (either
 * list implies `--rollups`; `auto` among the keys lets the engine add more),
 * `true` for `--rollups` alone, or undefined without them.
 */
export function rollupsOption(options: Options): RollupSpec | true | undefined {
  const keys = options['rollup-keys'];
  const sums = options['rollup-sums'];
  if (keys === undefined && sums === undefined) return options.rollups === true ? true : undefined;
  const declared = list(keys);
  const auto = declared.includes(AUTO);
  try {
    return rollupSpec(
      declared.filter((name) => name !== AUTO),
      list(sums),
      auto,
    );
  } catch (error) {
    throw new UsageError(`--rollup-keys, --rollup-sums: ${(error as Error).message}`);
  }
}

/** What `--rollup-reads always|cheaper` asks for, or undefined without it (the engine's default). */
export function rollupReadsOption(options: Options): RollupReads | undefined {
  const value = options['rollup-reads'];
  if (value === undefined) return undefined;
  if (value === 'always' || value === 'cheaper') return value;
  throw new UsageError("--rollup-reads must be 'always' or 'cheaper'");
}
