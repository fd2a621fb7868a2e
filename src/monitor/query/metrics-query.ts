import { EncodedBody } from '../encoded-body.js';
import type { MetricStore } from '../store.js';
import { evaluateQuery, type Retention } from './evaluate.js';
import { parseMetricsQuery, type QueryLimits } from './parse.js';
import { PatternCache } from './pattern-cache.js';
import { compileSelection, SeriesSelection } from './select.js';

/** Answers kept per snapshot, and the largest answer worth keeping (bytes). */
const MAX_CACHED_ANSWERS = 256;
const MAX_CACHED_ANSWER_LENGTH = 4 << 20;

/** The answer while collection is disabled (SPEC §5.2). */
export const DISABLED_ANSWER = '{"timerange_sec":0,"interval_sec":0,"metrics":[]}';

/**
 * `POST /api/v3/metrics` without HTTP: validates a body and answers it from the store. The answer
 * only changes when a snapshot is committed, so answers are cached per snapshot by the query's
 * canonical text (dashboards repeat the same query every few seconds); patterns are compiled once
 * and kept in a bounded cache.
 */
export class MetricsQueryService {
  private readonly store: MetricStore | undefined;
  private readonly retention: Retention;
  private readonly limits: QueryLimits;
  private readonly patterns = new PatternCache();
  private readonly answers = new Map<string, EncodedBody>();
  private readonly disabledAnswer = new EncodedBody(DISABLED_ANSWER);
  private answersSeq = -1;

  /** `store` undefined: collection is disabled. */
  constructor(store: MetricStore | undefined, retention: Retention, limits: QueryLimits) {
    this.store = store;
    this.retention = retention;
    this.limits = limits;
  }

  /** The JSON answer for a request body; throws `QueryError` (→ 400) for an invalid query. */
  answer(body: unknown): EncodedBody {
    const query = parseMetricsQuery(body, this.limits, this.patterns);
    const store = this.store;
    if (store === undefined) return this.disabledAnswer;
    if (this.answersSeq !== store.newestSeq) {
      this.answers.clear();
      this.answersSeq = store.newestSeq;
    }
    const cached = this.answers.get(query.key);
    if (cached !== undefined) return cached;
    const selection =
      query.timerangeSec !== undefined && query.items.length === 0
        ? SeriesSelection.all()
        : compileSelection(query.items, this.patterns);
    const answer = new EncodedBody(evaluateQuery(store, this.retention, query, selection));
    if (answer.bytes.length <= MAX_CACHED_ANSWER_LENGTH && this.answers.size < MAX_CACHED_ANSWERS) {
      this.answers.set(query.key, answer);
    }
    return answer;
  }
}
