/**
 * Inclusive bounds of an integer setting. Every number the configuration holds has one, so that
 * no value (from the file, an env var or `PUT /api/v3/config`) can ask the server for more memory,
 * time or sockets than makes sense; `why` says what the upper bound protects, for the message.
 */
export interface IntRange {
  readonly min: number;
  readonly max: number;
  readonly why: string;
}

/** The problem of a value outside `range` (without the key's name), or undefined when inside. */
export function rangeProblem(value: number, range: IntRange): string | undefined {
  if (value >= range.min && value <= range.max) return undefined;
  return `must be between ${range.min} and ${range.max} (${range.why}), got ${value}`;
}
