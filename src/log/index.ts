export { LogBuffer } from './log-buffer.js';
export { createServerLogger } from './server-logger.js';
export { registerLogRoutes } from './routes.js';
export { LOG_DOCS } from './contract.js';
export { parsePinoLine } from './log-event.js';
export { maskEvent } from './mask-event.js';
export { logLevelReloadStep } from './log-level-reload.js';
