/**
 * api-workers: the API on every core (docs/performance.md#the-api-on-every-core). Worker processes
 * share the server's listening socket, answer logins and metric queries, and hand every other
 * connection to the main process, which keeps all the state.
 */
export { createApiWorkers, type ApiWorkersDeps } from './api-workers.js';
export { WorkerPool, type WorkerEntry } from './worker-pool.js';
export { runApiWorker } from './worker-process.js';
export { WORKER_ENV } from './messages.js';
