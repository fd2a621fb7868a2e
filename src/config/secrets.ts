import { getPath, isPlainObject } from './json-path.js';
import { KEYS } from './keys.js';
import { s3StorageSecrets } from './s3-storages.js';
import type { Config } from './schema.js';

/**
 * The values of the keys declared `secret` (keys.ts), so that what the server shows (its log over
 * the API) can hide them wherever they appear; for `storage.s3`, the secrets inside its entries.
 * Empty values are left out.
 */
export function configSecrets(config: Config): string[] {
  return KEYS.filter((key) => key.secret)
    .flatMap((key) =>
      key.kind === 's3' ? s3StorageSecrets(config.storage.s3) : secretStrings(getPath(config, key.path)),
    )
    .filter((secret) => secret !== '');
}

/** A secret key's value, or, for a list of items (webhooks), each item's `secret`. */
function secretStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) =>
    isPlainObject(item) && typeof item.secret === 'string' ? [item.secret] : [],
  );
}
