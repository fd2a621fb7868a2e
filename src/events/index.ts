export { createEvents, type Events, type EventsDeps, type MediaLists } from './create-events.js';
export { NO_EVENTS, type EventSink, type EventType, type EventFields } from './event-sink.js';
export type { EventBus, BusEvent } from './event-bus.js';
export type { Timers } from './webhook.js';
export { logLineEvent } from './log-line-event.js';
export { EVENTS_DOCS } from './contract.js';
