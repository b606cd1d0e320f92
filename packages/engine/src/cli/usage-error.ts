/** A command-line mistake: reported with the usage text and exit code 2. */
export class UsageError extends Error {}

/** Parses a positive integer option, or throws a {@link UsageError} naming it. */
export function integerOption(
  name: string,
  value: string | boolean | undefined,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  const n =
    typeof value === 'string' && /^\d[\d_]*$/.test(value)
      ? Number(value.replaceAll('_', ''))
      : Number.NaN;
  if (!Number.isSafeInteger(n))
    throw new UsageError(`--${name} expects a whole number, got '${String(value)}'`);
  return n;
}

/** A string option or its default. */
export function stringOption(value: string | boolean | undefined, fallback: string): string {
  return typeof value === 'string' && value.length > 0 ? value : fallback;
}

/** The `--workspace` option (default `default`), or a {@link UsageError} for a name that is not one. */
export function workspaceOption(value: string | boolean | undefined): string {
  const workspace = stringOption(value, 'default');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(workspace)) {
    throw new UsageError(`--workspace '${workspace}' must be letters, digits, '_' or '-'`);
  }
  return workspace;
}
