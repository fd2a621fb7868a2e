import type { Config } from './schema.js';

/**
 * The secrets a configuration holds, so that what the server shows (its log over the API) can
 * hide them wherever they appear. Empty values are left out.
 */
export function configSecrets(config: Config): string[] {
  const { auth } = config.api;
  const { prometheus } = config.metrics;
  const memory = config.storage.memory.auth;
  return [
    auth.password,
    auth.jwt.secret,
    memory.password,
    prometheus.bearer_token,
    prometheus.password,
    ...config.storage.s3.flatMap((s3) => [s3.secret_access_key, s3.auth.password]),
  ].filter((secret) => secret !== '');
}
