import type { Config } from '../config/index.js';
import type { SnapshotMessage } from '../monitor/index.js';

/**
 * What the main process and its API workers say to each other, on the fork's IPC channel only
 * (it carries the config and so its secrets; never a port). Sent with the `advanced`
 * serialization: buffers and typed arrays travel as they are.
 */
export type ToWorker =
  /** The running config: build (or rebuild) the worker's routes from it, then answer `applied`. */
  | { type: 'config'; config: Config; generation: number }
  /** Accept connections on the listener sent with this message. */
  | { type: 'listen' }
  /** One committed metrics snapshot, in commit order (monitor/replica.ts). */
  | { type: 'snapshot'; snapshot: SnapshotMessage }
  /** Throttle keys with failed logins in their window: a login from or for them is the main's. */
  | { type: 'throttle'; addresses: string[]; usernames: string[] }
  /** The encoders running now: their connections may only reach what the main process allows. */
  | { type: 'encoders'; pids: number[] };

export type FromWorker =
  /** The routes of config `generation` answer from now on. */
  | { type: 'applied'; generation: number }
  /** The connection sent with this message, with the bytes already read from it, is the main's. */
  | { type: 'hand-off'; bytes: Uint8Array }
  /** Requests this worker answered, for the `http` sessions: `[remote, route, rx bytes, tx bytes]`. */
  | { type: 'requests'; counted: [string, string, number, number][] };

/** The environment variable that makes the server's entry run an API worker instead (start.ts). */
export const WORKER_ENV = 'STREAMCORE_API_WORKER';
