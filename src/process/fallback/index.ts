/**
 * process/fallback: inputs that never go down (docs/processes.md#fallback-sources). An input with
 * a fallback is read through a relay: feeders read the primary and the fallback, the switch picks
 * one and joins them on one timeline, and the encoder reads FLV from the relay's pipe.
 */
export { InputRelay, type InputRelayOptions } from './input-relay.js';
export type { LiveSource, SwitchSettings } from './fallback-switch.js';
export { fallbackKind } from './feeder-args.js';
export { LiveInputs } from './live-inputs.js';
export { RelayedInputs, type RelayedInputsDeps, type RelayedRun } from './relayed-inputs.js';
export type { LocalStream, LocalStreams } from './local-stream.js';
export type { FlvTag } from './flv.js';
