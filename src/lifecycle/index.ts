/** lifecycle: the start and stop steps modules register and the app runs in order. */
export { Lifecycle, type Step } from './lifecycle.js';
