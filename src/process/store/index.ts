/**
 * process/store: where process configs live. The in-memory store and its db.json file (datarhei
 * v16 layout, atomic writes), behind the interface a cluster's store also fills.
 */
export { ProcessStore, type ProcessRecords, type LoadedProcess } from './process-store.js';
export type { ProcessStoreBackend } from './store-backend.js';
export type { DbChange } from './db-journal.js';
export type { ProcessRecord } from './db.js';
