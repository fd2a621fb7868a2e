import { getPath } from './json-path.js';
import { KEYS } from './keys.js';
import type { Config } from './schema.js';

/**
 * The values of the keys declared `secret` (keys.ts), so that what the server shows (its log over
 * the API) can hide them wherever they appear. Empty values are left out.
 */
export function configSecrets(config: Config): string[] {
  return KEYS.filter((key) => key.secret)
    .map((key) => getPath(config, key.path))
    .filter((secret): secret is string => typeof secret === 'string' && secret !== '');
}
