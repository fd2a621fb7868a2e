/**
 * Escaping of the Prometheus text formats (exposition format 0.0.4 and OpenMetrics 1.0):
 * label values escape `\`, `"` and line feed in both; HELP text escapes `\` and line feed in
 * 0.0.4, and `"` as well in OpenMetrics.
 */

/** A label value inside `"…"`. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/[\\"\n]/g, escapeCharacter) : value;
}

/** HELP text in the 0.0.4 text format. */
export function escapeHelpText(help: string): string {
  return /[\\\n]/.test(help) ? help.replace(/[\\\n]/g, escapeCharacter) : help;
}

/** HELP text in OpenMetrics. */
export function escapeHelpOpenMetrics(help: string): string {
  return escapeLabelValue(help);
}

function escapeCharacter(character: string): string {
  return character === '\n' ? '\\n' : `\\${character}`;
}

/** A sample value: finite numbers in JavaScript's shortest round-trip form, which both formats accept. */
export function formatSampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
