export type { Auth0Tenant, Config } from './schema.js';
export { defaultConfig } from './schema.js';
export { KEYS, type ConfigKey } from './keys.js';
export { loadConfig, ConfigError, type LoadedConfig } from './load.js';
export { parseListenAddress, isCidr } from './validate.js';
export { resolveBindAddress, type BindAddress } from './bind-address.js';
export { configSecrets } from './secrets.js';
