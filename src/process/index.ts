export { createFfmpegCollector, createRestreamCollector } from './collector.js';
export { registerProcessRoutes } from './routes.js';
export { ProcessService, type ProcessServiceDeps } from './service.js';
export { memfsUrl } from './placeholders.js';
export type { SpawnFn } from './spawn.js';
