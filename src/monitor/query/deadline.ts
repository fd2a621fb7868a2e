/**
 * A query that ran out of its time budget (→ 503): the server answers it with an error rather
 * than let one request hold the event loop, and every other client, for longer.
 */
export class QueryTimeoutError extends Error {
  readonly details: string[];

  constructor(budgetMs: number) {
    const detail =
      `the query took longer than its time budget of ${budgetMs} ms (metrics.query.max_time_ms): ` +
      'ask for fewer series, fewer points or simpler label patterns';
    super(detail);
    this.name = 'QueryTimeoutError';
    this.details = [detail];
  }
}

/**
 * The time budget of one query. Work that cannot be interrupted (compiling one pattern, encoding
 * one series) is bounded by the size limits instead; between such steps the query calls `check`.
 */
export class QueryDeadline {
  private readonly now: () => number;
  private readonly budgetMs: number;
  private readonly endMs: number;

  /** `now`: a monotonic clock, ms. */
  constructor(now: () => number, budgetMs: number) {
    this.now = now;
    this.budgetMs = budgetMs;
    this.endMs = now() + budgetMs;
  }

  /** Throws `QueryTimeoutError` once the budget is spent. */
  check(): void {
    if (this.now() > this.endMs) throw new QueryTimeoutError(this.budgetMs);
  }
}
