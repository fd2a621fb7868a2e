import { gzipInPieces, ScratchBuffer } from '../../http/index.js';
import type { ProcessEntry, ProcessService } from '../service/index.js';
import type { ProcessPart } from './api-shapes.js';
import { processListPieces, type JsonPieces } from './process-json-fragments.js';
import { LIST_STATE_MAX_AGE_MS } from './published-state.js';
import { sameElements } from './same-elements.js';
import { unrefTimeout, type Schedule } from '../supervise/index.js';

export type { Schedule };

/** One question a client asks of the list: which processes, which parts; `key` names it. */
export interface ListQuestion {
  readonly key: string;
  readonly parts: ReadonlySet<ProcessPart>;
  readonly includes: (entry: ProcessEntry) => boolean;
}

export interface ListEncoding {
  /** From this size on a list is sent gzip-encoded to clients that accept it, bytes. */
  readonly minGzipBytes: number;
  /** Pieces deflated at once (parallel-gzip.ts). */
  readonly gzipPieces: number;
  /** zlib level. */
  readonly gzipLevel: number;
}

/** Distinct questions kept at once (a UI asks one or two; a client per process asks many small ones). */
const MAX_KEPT_QUESTIONS = 4;
/**
 * A question is answered ahead (see `ListAnswers`) while it is polled: asked twice
 * within this long, the last time within this long. It covers clients polling every second or
 * two; a client asking less often, or once, does not make the server rebuild a list several times
 * per request it sends, ms.
 */
const WARM_MS = 2500;
/**
 * Polled questions are answered ahead this often: under the states' age limit, with room for a
 * timer that fires late on a busy event loop, ms.
 */
const ANSWER_AHEAD_EVERY_MS = 900;
/**
 * Answering ahead encodes anew every state older than this, so that none reaches its age limit
 * before the next round (then a request would encode it, and deflate the list, itself), ms.
 */
const RENEW_AHEAD_AFTER_MS = LIST_STATE_MAX_AGE_MS - ANSWER_AHEAD_EVERY_MS - 50;

interface KeptAnswer {
  readonly question: ListQuestion;
  readonly pieces: JsonPieces;
  gzipped: Promise<Buffer> | undefined;
  /** Wall-clock times of the last request for it and of the one before, ms. */
  askedAtMs: number;
  askedBeforeMs: number;
  /** Whether its last request took gzip, so that the rebuild ahead compresses it too. */
  gzipAsked: boolean;
}

/**
 * Answers to the process list, kept while nothing in them changed. A list is the same bytes as
 * long as every piece it is made of is the same object (process-json-fragments.ts keeps each process's
 * config, report and head until they change, and the list's states for up to a second; see
 * published-state.ts), so an answer, gzip included, is reused when its pieces are identical, which
 * a walk over them tells for a few hundred processes in well under a millisecond. The states age,
 * so the questions being polled (`WARM_MS`) are answered again every `ANSWER_AHEAD_EVERY_MS`
 * with their states renewed before they reach the age limit, off the path of the requests: a UI
 * polling the list finds its answer ready instead of waiting for 200 states to be encoded and
 * 1.4 MB to be deflated, whenever in the second it asks (docs/performance.md#a-full-server,
 * fifth pass).
 */
export class ListAnswers {
  private readonly kept = new Map<string, KeptAnswer>();
  // The list before compression, written into the same memory each time (scratch-buffer.ts).
  private readonly buffer = new ScratchBuffer();
  /** Cancels the pending round of answering ahead; undefined when none is pending. */
  private cancelPending: (() => void) | undefined;
  private closed = false;
  private answeredAheadCount = 0;

  /**
   * @param reportError told about a failure while answering ahead, which no request would see
   *   (the next request builds its answer anew and meets the failure itself)
   * @param schedule runs the rounds of answering ahead (tests move it with `wallClock`)
   */
  constructor(
    private readonly service: ProcessService,
    private readonly encoding: ListEncoding,
    private readonly reportError: (error: unknown) => void,
    private readonly wallClock: () => number = Date.now,
    private readonly schedule: Schedule = unrefTimeout,
  ) {}

  /** Questions answered ahead of their requests so far (for tests and the curious). */
  get answeredAhead(): number {
    return this.answeredAheadCount;
  }

  /** The list's JSON for `question`, gzip-encoded when `acceptsGzip` and the list is large enough. */
  async answer(question: ListQuestion, acceptsGzip: boolean): Promise<{ bytes: Buffer; gzipped: boolean }> {
    const kept = this.current(question);
    kept.askedBeforeMs = kept.askedAtMs;
    kept.askedAtMs = this.wallClock();
    // Becoming polled, at once: the states this request found may be close to their age limit.
    if (polled(kept, kept.askedAtMs)) this.scheduleRebuild(0);
    if (acceptsGzip && kept.pieces.length >= this.encoding.minGzipBytes) {
      kept.gzipAsked = true;
      return { bytes: await this.gzipped(kept), gzipped: true };
    }
    kept.gzipAsked = false;
    return { bytes: kept.pieces.toBuffer(), gzipped: false };
  }

  /** Stops answering ahead (the server closes). */
  close(): void {
    this.closed = true;
    this.cancelPending?.();
    this.cancelPending = undefined;
    this.kept.clear();
  }

  /** The kept answer when its pieces are still the same, else a new one in its place. */
  private current(question: ListQuestion, renewStatesAfterMs?: number): KeptAnswer {
    const entries = this.service.sortedEntries().filter(question.includes);
    const pieces = processListPieces(this.service, entries, question.parts, renewStatesAfterMs);
    const kept = this.kept.get(question.key);
    if (kept !== undefined && sameElements(kept.pieces.pieces, pieces.pieces)) return kept;
    const fresh: KeptAnswer = {
      question,
      pieces,
      gzipped: undefined,
      askedAtMs: kept?.askedAtMs ?? -Infinity,
      askedBeforeMs: kept?.askedBeforeMs ?? -Infinity,
      gzipAsked: kept?.gzipAsked ?? false,
    };
    this.kept.delete(question.key);
    this.kept.set(question.key, fresh);
    if (this.kept.size > MAX_KEPT_QUESTIONS) {
      const oldest = this.kept.keys().next();
      if (oldest.done !== true) this.kept.delete(oldest.value);
    }
    return fresh;
  }

  private gzipped(kept: KeptAnswer): Promise<Buffer> {
    if (kept.gzipped !== undefined) return kept.gzipped;
    const { gzipPieces, gzipLevel } = this.encoding;
    const gzipped = this.buffer.borrow(kept.pieces.length, (buffer) =>
      gzipInPieces(kept.pieces.writeTo(buffer), gzipPieces, gzipLevel),
    );
    kept.gzipped = gzipped;
    // A failed encoding is not kept: the next request tries again (and reports its own failure).
    gzipped.catch(() => {
      if (kept.gzipped === gzipped) kept.gzipped = undefined;
    });
    return gzipped;
  }

  private scheduleRebuild(delayMs: number): void {
    if (this.cancelPending !== undefined || this.closed) return;
    this.cancelPending = this.schedule(() => {
      this.cancelPending = undefined;
      try {
        this.rebuild();
      } catch (error) {
        // A timer's exception would end the server; the next request answers anew.
        this.reportError(error);
      }
    }, delayMs);
  }

  /** Answers the polled questions again with their states renewed; forgets the unasked ones. */
  private rebuild(): void {
    const now = this.wallClock();
    let warm = false;
    // A copy: `current` moves a rebuilt answer to the end of the map, where the walk would meet it again.
    for (const [key, kept] of [...this.kept]) {
      if (now - kept.askedAtMs > WARM_MS) {
        // Nobody asked for it lately: the memory is better given back.
        this.kept.delete(key);
        continue;
      }
      if (!polled(kept, now)) continue;
      warm = true;
      this.answeredAheadCount++;
      const next = this.current(kept.question, RENEW_AHEAD_AFTER_MS);
      if (next.gzipAsked) this.gzipped(next).catch(this.reportError);
    }
    if (warm) this.scheduleRebuild(ANSWER_AHEAD_EVERY_MS);
  }
}

function polled(kept: KeptAnswer, nowMs: number): boolean {
  return nowMs - kept.askedAtMs <= WARM_MS && kept.askedAtMs - kept.askedBeforeMs <= WARM_MS;
}
