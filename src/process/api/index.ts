/**
 * process/api: the HTTP face of processes. Routes, request and answer shapes, views of a process.
 * Talks to the service only; knows nothing of supervision internals beyond what views read.
 */
export { registerProcessRoutes } from './routes.js';
export { registerEncoderGuard, type EncoderGuardDeps } from './encoder-guard.js';
export { PROCESS_DOCS, PROCESS_SCHEMAS } from './contract.js';
