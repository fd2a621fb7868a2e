export { createFfmpegCollector, createRestreamCollector } from './collector.js';
export { registerProcessRoutes } from './routes.js';
export { ProcessService, memfsUrl, type ProcessServiceDeps } from './service.js';
export type { SpawnFn } from './spawn.js';
