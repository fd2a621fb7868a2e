import type { Logger } from 'pino';
import { getPath, KEYS, setPath, type Config } from '../config/index.js';

/** The keys a reload puts into effect in the running server; every other change waits for a start. */
export const LIVE_KEYS: readonly string[] = [
  'name',
  'host.name',
  'api.auth.username',
  'api.auth.password',
  'api.auth.jwt.secret',
];

const CREDENTIAL_KEYS = new Set(['api.auth.username', 'api.auth.password', 'api.auth.jwt.secret']);

export interface LiveApplyDeps {
  /** The configuration the server runs with; live keys are updated in it, in place. */
  running: Config;
  /** See `Auth.applyCredentials`. */
  applyCredentials: (settings: Config['api']['auth']) => boolean;
  /** Rebuilds HTTPS and its certificate from `next` (tls/); false when it cannot while running. */
  applyTls?: (next: Config) => boolean;
  logger: Logger;
}

/**
 * Puts a reloaded configuration into effect without stopping anything: processes, listeners and
 * sessions keep running. Changes of live keys take effect now; the others are kept for the next
 * start, named in the log (key names only: values may be secrets). Answers those keys.
 */
export function applyLive(next: Config, deps: LiveApplyDeps): string[] {
  const changed = KEYS.map((key) => key.path).filter(
    (path) => JSON.stringify(getPath(deps.running, path)) !== JSON.stringify(getPath(next, path)),
  );
  const applied: string[] = [];
  const nextStart: string[] = [];
  const credentials = changed.filter((path) => CREDENTIAL_KEYS.has(path));
  // All credential keys together or none: a new password with the old secret is a new key as well.
  const credentialsApplied =
    credentials.length > 0 && !changed.includes('api.auth.enable') && deps.applyCredentials(next.api.auth);
  // HTTPS is built anew from the whole `tls` section; a new host.name needs a new certificate.
  const tlsChanged = changed.some(
    (path) => path.startsWith('tls.') || (path === 'host.name' && next.tls.auto),
  );
  const tlsApplied = tlsChanged && deps.applyTls !== undefined && deps.applyTls(next);
  for (const path of changed) {
    const live = CREDENTIAL_KEYS.has(path)
      ? credentialsApplied
      : path.startsWith('tls.')
        ? tlsApplied
        : LIVE_KEYS.includes(path);
    if (!live) {
      nextStart.push(path);
      continue;
    }
    setPath(deps.running, path, structuredClone(getPath(next, path)));
    applied.push(path);
  }
  deps.logger.info({ applied, nextStart }, 'configuration reloaded');
  if (nextStart.length > 0) {
    deps.logger.warn(
      { keys: nextStart },
      'configuration reloaded: these keys take effect at the next start of the server',
    );
  }
  return nextStart;
}
