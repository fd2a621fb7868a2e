export { createFfmpegCollector, createRestreamCollector } from './collector.js';
export { PROCESS_DOCS, PROCESS_SCHEMAS, registerEncoderGuard, registerProcessRoutes } from './api/index.js';
export {
  createEncoderSpawn,
  ProcessService,
  type PreparedProbe,
  type ProcessServiceDeps,
} from './service/index.js';
export { memfsUrl, type PlaceholderTemplate, type RunCredential, type RunScope } from './config/index.js';
export type { Schedule, SpawnFn } from './supervise/index.js';
export { compileAccessRules, directionRefusal } from './access/index.js';
export { EncoderConnections, EncoderRegistry } from './supervise/index.js';
export type { FlvTag, LocalStream, LocalStreams } from './fallback/index.js';
export {
  type DbChange,
  type LoadedProcess,
  type ProcessRecord,
  type ProcessRecords,
  type ProcessStoreBackend,
} from './store/index.js';
export {
  configToPlain,
  parseOutputReference,
  ProcessConfigBody,
  readProcessConfig,
  type ProcessConfig,
} from './config/index.js';
