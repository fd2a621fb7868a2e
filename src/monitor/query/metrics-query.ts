import { EncodedBody } from '../encoded-body.js';
import type { MetricStore } from '../store.js';
import { evaluateQuery, type Retention } from './evaluate.js';
import { parseMetricsQuery, type MetricsQuery, type QueryLimits } from './parse.js';
import { PatternCache } from './pattern-cache.js';
import { compileSelection, SeriesSelection } from './select.js';

/** Answers kept per snapshot, and the largest answer worth keeping (bytes). */
const MAX_CACHED_ANSWERS = 256;
const MAX_CACHED_ANSWER_LENGTH = 4 << 20;

/** The answer while collection is disabled (SPEC §5.2). */
export const DISABLED_ANSWER = '{"timerange_sec":0,"interval_sec":0,"metrics":[]}';

/**
 * `POST /api/v3/metrics` without HTTP: validates a body and answers it from the store. The answer
 * only changes when a snapshot is committed, so answers are cached per snapshot, both by the
 * request's raw text (dashboards repeat the same query byte for byte every few seconds: such a
 * request is answered without parsing) and by the query's canonical key (the same query written
 * differently). Patterns are compiled once and kept in a bounded cache.
 */
export class MetricsQueryService {
  private readonly store: MetricStore | undefined;
  private readonly retention: Retention;
  private readonly limits: QueryLimits;
  private readonly patterns = new PatternCache();
  private readonly byKey = new Map<string, EncodedBody>();
  private readonly byText = new Map<string, EncodedBody>();
  private readonly disabledAnswer = new EncodedBody(DISABLED_ANSWER);
  private cachedSeq = -1;

  /** `store` undefined: collection is disabled. */
  constructor(store: MetricStore | undefined, retention: Retention, limits: QueryLimits) {
    this.store = store;
    this.retention = retention;
    this.limits = limits;
  }

  /** The answer already given in this snapshot to a request with exactly this body text, if any. */
  cachedAnswer(text: string): EncodedBody | undefined {
    this.dropStaleAnswers();
    return this.byText.get(text);
  }

  /**
   * The JSON answer for a parsed request body; throws `QueryError` (→ 400) for an invalid query.
   * `text`, the body as received, makes a later identical request a `cachedAnswer` hit.
   */
  answer(body: unknown, text?: string): EncodedBody {
    const query = parseMetricsQuery(body, this.limits, this.patterns);
    this.dropStaleAnswers();
    let answer = this.byKey.get(query.key);
    if (answer === undefined) {
      answer = this.evaluate(query);
      if (answer.bytes.length <= MAX_CACHED_ANSWER_LENGTH && this.byKey.size < MAX_CACHED_ANSWERS) {
        this.byKey.set(query.key, answer);
      }
    }
    if (text !== undefined && this.byText.size < MAX_CACHED_ANSWERS && this.byKey.get(query.key) === answer) {
      this.byText.set(text, answer);
    }
    return answer;
  }

  private evaluate(query: MetricsQuery): EncodedBody {
    const store = this.store;
    if (store === undefined) return this.disabledAnswer;
    const selection =
      query.timerangeSec !== undefined && query.items.length === 0
        ? SeriesSelection.all()
        : compileSelection(query.items, this.patterns);
    return new EncodedBody(evaluateQuery(store, this.retention, query, selection));
  }

  /** Answers hold for one snapshot only. */
  private dropStaleAnswers(): void {
    const seq = this.store?.newestSeq ?? -1;
    if (seq === this.cachedSeq) return;
    this.byKey.clear();
    this.byText.clear();
    this.cachedSeq = seq;
  }
}
