/**
 * process/store: where process configs live. The in-memory store and its db.json file (datarhei
 * v16 layout, atomic writes).
 */
export { ProcessStore } from './process-store.js';
