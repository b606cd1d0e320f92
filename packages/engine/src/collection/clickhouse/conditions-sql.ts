/**
 * `a AND b`, leaving out conditions that are plainly `true` (a query without filters): with a
 * literal `true` among its conditions ClickHouse filters the rows again after PREWHERE, and may
 * repeat every condition it moved there.
 */
export function and(...conditions: string[]): string {
  const kept = conditions.filter((c) => c !== 'true');
  return kept.length ? kept.join(' AND ') : 'true';
}
