/** malloc: giving freed malloc memory back to the kernel (native/malloc-trim). */
export { loadMallocTrimAddon, type MallocTrimAddon } from './addon.js';
export { MallocTrimmer } from './trimmer.js';
