/**
 * Limits of the metrics query for tests that are not about the limits: generous enough that no
 * test query meets them. Only a time-budget test spends a budget (on a fake clock, with its own
 * `maxTimeMs`); the loaded test machine must not.
 */
export const LIMITS = {
  maxItems: 1000,
  maxPatternLength: 1000,
  maxTotalPatternLength: 16_000,
  maxProgramSize: 20_000,
  maxTimeMs: 60_000,
};
