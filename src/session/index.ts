export { createSessions, COLLECTOR_NAMES, type CollectorName, type Sessions } from './sessions.js';
export type { SessionCollector, CollectorStats, Session } from './session-collector.js';
export { IpIgnoreList } from './ip-ignorelist.js';
export { newSessionId } from './session-id.js';
export { LiveSessions, type MeteredConnection } from './live-sessions.js';
export { SESSION_DOCS, SESSION_SCHEMAS } from './contract.js';
export { TrafficMeter, type RequestCounter } from './traffic-meter.js';
