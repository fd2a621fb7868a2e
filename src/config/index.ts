export type { Auth0Tenant, Config, S3Storage, SandboxMode, Webhook } from './schema.js';
export { S3_NAME, S3_SECRET_FIELDS } from './s3-storages.js';
export { defaultConfig, SANDBOX_MODES } from './schema.js';
export { DECLARED_KEYS, KEYS, type ConfigKey } from './keys.js';
export {
  isDeclaredKey,
  type DeclaredKey,
  type KeyDeclaration,
  type KeyKind,
  type V16Kind,
} from './declare-key.js';
export { rangeProblem, type IntRange } from './int-range.js';
export {
  loadConfig,
  readConfigFile,
  resolveConfig,
  ConfigError,
  type LoadedConfig,
  type ResolvedConfig,
} from './load.js';
export { getPath, setPath, isPlainObject } from './json-path.js';
export { parseListenAddress, isCidr } from './validate.js';
export { resolveBindAddress, resolveListenAddress, type BindAddress } from './bind-address.js';
export { configSecrets } from './secrets.js';
export { accessSettingProblems, compileAccessExpression, type AccessSettings } from './access-settings.js';
