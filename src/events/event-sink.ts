/**
 * What the server's modules tell the event bus. Each domain publishes what already happens in it
 * (a process changed state, a publisher connected, a file was written); the bus numbers and keeps
 * the events and hands them to stream clients and webhooks.
 */

/** The kinds of events (`type` of every event object); docs/events.md lists their fields. */
export type EventType = 'process' | 'log' | 'media' | 'filesystem' | 'session' | 'config';

/** Field values of an event: flat, JSON-encodable. */
export type EventFields = Readonly<
  Record<string, string | number | boolean | Readonly<Record<string, string>>>
>;

export interface EventSink {
  /**
   * Publishes one event: `type` is its kind, `event` what happened (`state`, `publish`, or a log
   * line's component), `fields` the rest. Never throws and never waits: delivery happens later.
   */
  publish(type: EventType, event: string, fields: EventFields): void;
}

/** A sink that drops everything, for modules built without a bus (tools, benchmarks). */
export const NO_EVENTS: EventSink = { publish: () => undefined };
