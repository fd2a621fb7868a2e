/**
 * process/store: where process configs live. The in-memory store and its db.json file (datarhei
 * v16 layout, atomic writes).
 */
export { ProcessStore, type ProcessRecords } from './process-store.js';
export type { ProcessRecord } from './db.js';
