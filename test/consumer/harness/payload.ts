/** The part of the edge's chart payload the scenarios read. */
export interface Payload {
  graph: string;
  series?: { name: string; values: (number | null)[] }[];
  value?: number | null;
}

/** Everything a payload counts: a Single Value's number, or the sum of every series' buckets. */
export function payloadTotal(payload: Payload): number {
  if (payload.value !== undefined) return payload.value ?? 0;
  return (payload.series ?? []).flatMap((s) => s.values).reduce<number>((a, v) => a + (v ?? 0), 0);
}
