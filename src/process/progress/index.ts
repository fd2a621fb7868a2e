/**
 * process/progress: what a running ffmpeg reports back. The progress tracker, its values and rate
 * windows, and the `-vstats` channel; built on the parsers in process/ffmpeg/.
 */
export { ProgressTracker } from './progress-tracker.js';
export type { IoLabels } from './progress-tracker.js';
export { atRest, emptyProgress } from './progress-values.js';
export type { ProgressValues, StreamValues } from './progress-values.js';
export { VstatsChannel } from './vstats-channel.js';
