import type { EventFields, EventSink, EventType } from './event-sink.js';

/** One numbered event, as every subscriber sees it. */
export interface BusEvent {
  /** 1, 2, 3, … for the life of the server (a restart begins at 1 again). */
  readonly seq: number;
  /** Unix milliseconds. */
  readonly ts: number;
  readonly type: EventType;
  readonly event: string;
  readonly fields: EventFields;
  /** The event object as JSON text, one line: `{"seq":…,"ts":…,"type":…,"event":…,…}`. */
  readonly json: string;
}

export interface BusSubscriber {
  /**
   * The events published since the previous call, oldest first. Called from a later turn of the
   * event loop than `publish`, never from inside it; a throw is reported and costs only this call.
   */
  deliver(events: readonly BusEvent[]): void;
}

/** What a client that saw events up to some `seq` can still be given. */
export interface Replay {
  /** The kept events after that `seq`, oldest first. */
  events: BusEvent[];
  /**
   * Set when events were missed: `expired` when they left the ring (`from`…`to` are gone),
   * `restart` when the `seq` given is ahead of this server (it restarted and numbers from 1 again;
   * `from`…`to` of this life are gone, none when `to` < `from`).
   */
  gap?: { reason: 'expired' | 'restart'; from: number; to: number };
}

export interface EventBusOptions {
  /** How many of the latest events are kept for clients that reconnect (at least 1). */
  replayEvents: number;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  /** A subscriber threw: reported once per throw, the others still get their events. */
  onSubscriberError: (error: unknown) => void;
}

/**
 * The server's one event bus: numbers each event, keeps the latest ones in a ring for replay, and
 * hands them to the subscribers in batches, one batch per turn of the event loop. Publishing only
 * appends (a module that publishes never waits for a slow subscriber, nor runs one's code).
 */
export class EventBus implements EventSink {
  private seq = 0;
  private readonly ring: BusEvent[] = [];
  /** Where the next event goes once the ring is full. */
  private next = 0;
  private pending: BusEvent[] = [];
  private scheduled = false;
  private readonly subscribers = new Set<BusSubscriber>();

  constructor(private readonly options: EventBusOptions) {
    if (!Number.isInteger(options.replayEvents) || options.replayEvents < 1) {
      throw new RangeError(`replayEvents must be >= 1, got ${options.replayEvents}`);
    }
  }

  /** The number of the latest event (0 before the first). */
  get lastSeq(): number {
    return this.seq;
  }

  publish(type: EventType, event: string, fields: EventFields): void {
    const seq = ++this.seq;
    const ts = this.options.now();
    const head = JSON.stringify({ seq, ts, type, event });
    const rest = JSON.stringify(fields);
    const json = rest === '{}' ? head : `${head.slice(0, -1)},${rest.slice(1)}`;
    const published: BusEvent = { seq, ts, type, event, fields, json };
    this.keep(published);
    if (this.subscribers.size === 0) return;
    this.pending.push(published);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.dispatch());
    }
  }

  /** Adds a subscriber for the events published from now on; answers its removal. */
  subscribe(subscriber: BusSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /** The kept events after `lastSeq`, and the gap before them when some are no longer kept. */
  since(lastSeq: number): Replay {
    const kept = this.kept();
    const oldest = kept[0]?.seq ?? this.seq + 1;
    if (lastSeq > this.seq) return { events: kept, gap: { reason: 'restart', from: 1, to: oldest - 1 } };
    const events = kept.filter((event) => event.seq > lastSeq);
    return lastSeq + 1 < oldest
      ? { events, gap: { reason: 'expired', from: lastSeq + 1, to: oldest - 1 } }
      : { events };
  }

  private keep(event: BusEvent): void {
    if (this.ring.length < this.options.replayEvents) {
      this.ring.push(event);
      return;
    }
    this.ring[this.next] = event;
    this.next = (this.next + 1) % this.options.replayEvents;
  }

  private kept(): BusEvent[] {
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  /** Hands out what is pending now rather than on the next turn (before the streams close). */
  flush(): void {
    if (this.pending.length > 0) this.dispatch();
  }

  private dispatch(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    for (const subscriber of this.subscribers) {
      try {
        subscriber.deliver(batch);
      } catch (error) {
        this.options.onSubscriberError(error);
      }
    }
  }
}
