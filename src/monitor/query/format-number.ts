/**
 * A finite sample value as a JSON number (docs/metrics.md#post-apiv3metrics-the-query): integral values without decimals, others
 * rounded to 3 decimals. Callers never pass NaN or infinities (the store does not keep them).
 */
export function formatNumber(value: number): string {
  if (Number.isInteger(value)) return Object.is(value, -0) ? '0' : String(value);
  const rounded = Math.round(value * 1000) / 1000;
  return Object.is(rounded, -0) ? '0' : String(rounded);
}
