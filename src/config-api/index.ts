export { ConfigStore, type ApplyConfig, type ConfigSource } from './config-store.js';
export { CONFIG_DOCS, type ConfigAnswer } from './contract.js';
export { registerConfigRoutes } from './routes.js';
export { V16_FIELDS } from './v16-fields.js';
export { applyLive, type DeferredKey } from './live-apply.js';
