export { createFfmpegCollector, createRestreamCollector } from './collector.js';
export { registerProcessRoutes } from './api/index.js';
export { ProcessService, type ProcessServiceDeps } from './service/index.js';
export { memfsUrl, type PlaceholderTemplate } from './config/index.js';
export type { SpawnFn } from './supervise/index.js';
export { EncoderRegistry, probeParentDeathSignal, withParentDeathSignal } from './supervise/index.js';
