import type { Logger } from 'pino';
import type { Webhook as WebhookConfig } from '../config/index.js';
import type { WebhookStateDto } from './contract.js';
import type { BusEvent, BusSubscriber } from './event-bus.js';
import { withoutUserInfo } from './user-info.js';
import type { PostJson } from './webhook-post.js';
import { SIGNATURE_HEADER, signDelivery } from './webhook-signature.js';

/** The timers of delivery (attempt time-outs, back-off); injected so tests can run them faster. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface DeliveryLimits {
  /** Events held at most (waiting and being delivered); past it the oldest waiting are dropped and counted. */
  maxQueued: number;
  /** Events per delivery at most. */
  maxBatch: number;
  /** Attempts of one delivery before its events are dropped and counted. */
  maxAttempts: number;
  /** Wait before the first retry, ms; doubled after each failure up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** One attempt's limit, ms: a receiver that never answers fails like one that refuses. */
  attemptTimeoutMs: number;
}

export const DEFAULT_DELIVERY: Omit<DeliveryLimits, 'maxQueued'> = {
  maxBatch: 100,
  maxAttempts: 10,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  attemptTimeoutMs: 10_000,
};

export interface WebhookDeps {
  post: PostJson;
  timers: Timers;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  logger: Logger;
  limits: DeliveryLimits;
}

/**
 * One receiver: a bounded queue of the events it asked for, delivered in order, one delivery at a
 * time, each a signed JSON POST `{"events":[…]}`. A failed delivery is retried with exponential
 * back-off up to `maxAttempts`; a receiver that is down only fills its own queue. Its log lines
 * are the changes between working and failing, not every attempt (and never the secret).
 */
export class Webhook implements BusSubscriber {
  private readonly waiting: BusEvent[] = [];
  private inFlight: BusEvent[] = [];
  private attempts = 0;
  /** A delivery or its back-off is under way. */
  private busy = false;
  private retryTimer: unknown;
  private closed = false;
  private failing = false;
  private delivered = 0;
  private dropped = 0;
  private lastSuccess: number | null = null;
  private lastError: { ts: number; message: string } | null = null;
  private readonly wants: ReadonlySet<string> | undefined;

  constructor(
    private readonly config: WebhookConfig,
    private readonly deps: WebhookDeps,
  ) {
    this.wants =
      config.events.length === 0 || config.events.includes('*') ? undefined : new Set(config.events);
  }

  deliver(events: readonly BusEvent[]): void {
    if (this.closed) return;
    for (const event of events) {
      if (this.wants !== undefined && !this.wants.has(event.type)) continue;
      this.waiting.push(event);
    }
    // The delivery under way counts too: the hook holds `maxQueued` events at most.
    const excess = Math.min(
      this.waiting.length,
      this.waiting.length + this.inFlight.length - this.deps.limits.maxQueued,
    );
    if (excess > 0) {
      this.waiting.splice(0, excess);
      this.dropped += excess;
    }
    if (!this.busy) this.sendNext();
  }

  state(): WebhookStateDto {
    return {
      url: withoutUserInfo(this.config.url),
      events: [...this.config.events],
      delivered: this.delivered,
      queued: this.waiting.length + this.inFlight.length,
      dropped: this.dropped,
      last_success: this.lastSuccess,
      last_error: this.lastError,
    };
  }

  /** Stops sending; what is queued is dropped with the server. */
  close(): void {
    this.closed = true;
    if (this.retryTimer !== undefined) this.deps.timers.clearTimeout(this.retryTimer);
  }

  private sendNext(): void {
    if (this.closed) return;
    if (this.inFlight.length === 0) this.inFlight = this.waiting.splice(0, this.deps.limits.maxBatch);
    if (this.inFlight.length === 0) {
      this.busy = false;
      return;
    }
    this.busy = true;
    this.attempts++;
    const body = `{"events":[${this.inFlight.map((event) => event.json).join(',')}]}`;
    const signature = signDelivery(this.config.secret, body, Math.floor(this.deps.now() / 1000));
    const abort = new AbortController();
    const timeout = this.deps.timers.setTimeout(
      () => abort.abort(new Error('no answer in time')),
      this.deps.limits.attemptTimeoutMs,
    );
    this.deps
      .post(
        this.config.url,
        body,
        { [SIGNATURE_HEADER]: signature, 'user-agent': 'streamcore' },
        abort.signal,
      )
      .then(
        () => this.succeeded(),
        (error: unknown) => this.failed(error),
      )
      .finally(() => this.deps.timers.clearTimeout(timeout));
  }

  private succeeded(): void {
    this.delivered += this.inFlight.length;
    this.inFlight = [];
    this.attempts = 0;
    this.lastSuccess = this.deps.now();
    if (this.failing) {
      this.failing = false;
      this.deps.logger.info({ component: 'events', webhook: this.state().url }, 'webhook delivers again');
    }
    this.sendNext();
  }

  private failed(error: unknown): void {
    if (this.closed) return;
    const message =
      error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    this.lastError = { ts: this.deps.now(), message };
    if (!this.failing) {
      this.failing = true;
      this.deps.logger.warn(
        { component: 'events', webhook: this.state().url, reason: message },
        'webhook delivery failed; retrying',
      );
    }
    const limits = this.deps.limits;
    if (this.attempts >= limits.maxAttempts) {
      this.dropped += this.inFlight.length;
      this.inFlight = [];
      this.attempts = 0;
    }
    const delay = Math.min(limits.baseDelayMs * 2 ** Math.max(0, this.attempts - 1), limits.maxDelayMs);
    this.retryTimer = this.deps.timers.setTimeout(() => {
      this.retryTimer = undefined;
      this.sendNext();
    }, delay);
  }
}
