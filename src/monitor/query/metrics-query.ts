import { EncodedBody } from '../../http/index.js';
import type { MetricHistory } from '../history/index.js';
import type { MetricStore } from '../store/index.js';
import { AnswerBuffers, MIN_POOLED_BYTES } from './answer-buffers.js';
import { assembleAnswer } from './assemble-answer.js';
import { QueryDeadline } from './deadline.js';
import { answerHead } from './answer-text.js';
import { parseMetricsQuery, type MetricsQuery, type QueryLimits } from './parse.js';
import { PatternCache } from './pattern-cache.js';
import type { Retention } from './point-plan.js';
import { selectionOf } from './select.js';
import { SeriesFragments } from './series-fragments.js';

/**
 * Bytes of answers and of the request texts asked in a snapshot kept for it. Answers assembled
 * from fragments are cheap, so the cache only has to catch the dashboard that repeats a body; a
 * bound in bytes keeps a stream of varied queries from holding megabytes per snapshot
 * (docs/metrics.md#caches-on-the-query-path).
 */
const MAX_CACHED_BYTES = 2 << 20;

interface Evaluated {
  answer: EncodedBody;
  pooled: boolean;
  fromHistory: boolean;
}

/** The answer while collection is disabled (docs/metrics.md#post-apiv3metrics-the-query). */
export const DISABLED_ANSWER = '{"timerange_sec":0,"interval_sec":0,"metrics":[]}';

/**
 * `POST /api/v3/metrics` without HTTP: validates a body and answers it from the store.
 *
 * Answers are assembled from fragments encoded once per series and snapshot (assemble-answer.ts),
 * so a query that differs from every earlier one costs selecting series and copying bytes. On top,
 * answers are kept for the snapshot by the request's raw text (from its second request, or its
 * first when the history answered): a dashboard repeating the same body byte for byte is answered
 * without parsing. Patterns are compiled once and kept in a bounded cache. Every query has a time
 * budget (`QueryDeadline`). An assembled answer that no cache keeps is written into memory reused
 * from earlier such answers (answer-buffers.ts); the caller reports with `written` when its
 * response is out.
 */
export class MetricsQueryService {
  private readonly store: MetricStore | undefined;
  private readonly retention: Retention;
  private readonly limits: QueryLimits;
  private readonly now: () => number;
  private readonly patterns: PatternCache;
  private readonly fragments: SeriesFragments | undefined;
  private readonly head: Buffer;
  private readonly byText = new Map<string, EncodedBody>();
  /** Texts asked once in this snapshot (`keep`). */
  private readonly askedOnce = new Set<string>();
  private cachedBytes = 0;
  private readonly disabledAnswer = new EncodedBody(DISABLED_ANSWER);
  private cachedSeq = -1;
  private readonly history: MetricHistory | undefined;
  private readonly buffers = new AnswerBuffers();
  private readonly allocate = (length: number): Buffer => this.buffers.acquire(length);
  /** Answers whose bytes came from `buffers` and that no cache holds: each was given to one request. */
  private readonly reusable = new WeakSet<EncodedBody>();

  /**
   * `store` undefined: collection is disabled. `now`: a monotonic clock (ms) for the time budget.
   * `history`: answers ranges past the raw window (docs/history.md#queries-which-tier-answers-which-range).
   */
  constructor(
    store: MetricStore | undefined,
    retention: Retention,
    limits: QueryLimits,
    now: () => number = () => performance.now(),
    history?: MetricHistory,
  ) {
    this.store = store;
    this.history = history;
    this.retention = retention;
    this.limits = limits;
    this.now = now;
    this.patterns = new PatternCache(limits.maxProgramSize);
    this.fragments = store === undefined ? undefined : new SeriesFragments(store);
    this.head = Buffer.from(answerHead(retention));
  }

  /** The answer already given in this snapshot to a request with exactly this body text, if any. */
  cachedAnswer(text: string): EncodedBody | undefined {
    this.dropStaleAnswers();
    return this.byText.get(text);
  }

  /**
   * The JSON answer for a parsed request body; rejects with `QueryError` (→ 400) for an invalid
   * query and `QueryTimeoutError` (→ 503) when it spends its time budget. `text`, the body as
   * received, makes later identical requests `cachedAnswer` hits (see `keep`). A range that reads
   * the history's files waits for them (the thread pool); when a snapshot is committed meanwhile,
   * the answer is made again from the new one (the history's part is then in memory), so an answer
   * always belongs to one snapshot.
   */
  async answer(body: unknown, text?: string): Promise<EncodedBody> {
    const deadline = new QueryDeadline(this.now, this.limits.maxTimeMs);
    const query = parseMetricsQuery(body, this.limits, this.patterns, deadline);
    for (;;) {
      this.dropStaleAnswers();
      const seq = this.store?.newestSeq;
      const evaluated = await this.evaluate(query, deadline);
      if (this.store?.newestSeq !== seq) {
        if (evaluated.pooled) this.buffers.release(evaluated.answer.bytes);
        deadline.check();
        continue;
      }
      this.keep(evaluated, text);
      return evaluated.answer;
    }
  }

  /** Does `answer` (from `answer`) give its memory back once written (see `written`)? */
  reusesMemory(answer: EncodedBody): boolean {
    return this.reusable.has(answer);
  }

  /**
   * To be called once the response carrying `answer` (from `answer`) has been written, its last
   * byte handed to the kernel, and not before: an answer no cache holds gives its memory back for
   * later answers. Any other answer is left alone; a second call for the same answer does nothing.
   */
  written(answer: EncodedBody): void {
    if (this.reusable.delete(answer)) this.buffers.release(answer.bytes);
  }

  /** `pooled`: the answer's bytes came from `buffers`; `fromHistory`: a tier answered part of it. */
  private async evaluate(query: MetricsQuery, deadline: QueryDeadline): Promise<Evaluated> {
    const store = this.store;
    if (store === undefined || this.fragments === undefined)
      return { answer: this.disabledAnswer, pooled: false, fromHistory: false };
    const { bytes, fromHistory } = await assembleAnswer(
      store,
      this.retention,
      this.fragments,
      this.head,
      query,
      selectionOf(query),
      deadline,
      this.history,
      this.allocate,
    );
    return { answer: new EncodedBody(bytes), pooled: bytes.length >= MIN_POOLED_BYTES, fromHistory };
  }

  /**
   * Keeps the answer for `text`: at once when a history tier answered part of it (making it again
   * costs milliseconds), else once that text is asked a second time in this snapshot. A kept answer
   * holds memory of its own, where one given once goes back to `buffers` when written, and most
   * texts are asked once (a range picker, varied label selections): keeping every first answer
   * from the raw window cost a 30 KB answer about 24 µs more than it saved
   * (docs/metrics.md#caches-on-the-query-path).
   */
  private keep({ answer, pooled, fromHistory }: Evaluated, text: string | undefined): void {
    if (text !== undefined) {
      if (!fromHistory && !this.askedOnce.has(text)) {
        if (this.fits(text.length)) this.askedOnce.add(text);
      } else if (this.fits(answer.bytes.length + (this.askedOnce.has(text) ? 0 : text.length))) {
        this.byText.set(text, answer);
        return;
      }
    }
    if (pooled) this.reusable.add(answer);
  }

  /** Counts `bytes` against the cache bound if they fit. */
  private fits(bytes: number): boolean {
    if (this.cachedBytes + bytes > MAX_CACHED_BYTES) return false;
    this.cachedBytes += bytes;
    return true;
  }

  /** Answers hold for one snapshot only. */
  private dropStaleAnswers(): void {
    const seq = this.store?.newestSeq ?? -1;
    if (seq === this.cachedSeq) return;
    this.byText.clear();
    this.askedOnce.clear();
    this.cachedBytes = 0;
    this.cachedSeq = seq;
  }
}
