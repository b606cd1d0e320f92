import type { ParamValue } from '@analytics-chart/protocol';

/** Whether a value is a `{"$param": "name"}` placeholder. */
export function placeholderName(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== '$param') return undefined;
  const name = (value as { $param: unknown }).$param;
  return typeof name === 'string' ? name : undefined;
}

/** Every placeholder name in a value, in order of appearance. */
export function collectPlaceholders(value: unknown, into: string[] = []): string[] {
  const name = placeholderName(value);
  if (name !== undefined) into.push(name);
  else if (Array.isArray(value)) for (const item of value) collectPlaceholders(item, into);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) collectPlaceholders(item, into);
  return into;
}

/**
 * Returns a deep copy of `value` with every placeholder replaced by its parameter. Values are
 * placed as JSON values, never spliced into strings, so a parameter can only ever be one whole
 * value (a filter operand, a collection name), never SQL or a filter operator.
 */
export function substituteParams(
  value: unknown,
  params: Readonly<Record<string, ParamValue>>,
): unknown {
  const name = placeholderName(value);
  if (name !== undefined) {
    if (!Object.hasOwn(params, name)) throw new Error(`parameter '${name}' has no value`);
    return params[name];
  }
  if (Array.isArray(value)) return value.map((item) => substituteParams(item, params));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = substituteParams(item, params);
    return out;
  }
  return value;
}
