/** lifecycle: the start, stop and reload steps modules register and the app runs in order. */
export { Lifecycle, type Step } from './lifecycle.js';
export { NOTHING_TO_BUILD, readAtUse, type PreparedReload, type ReloadStep } from './reload.js';
