import type { Config } from '../config/index.js';
import type { PreparedReload, ReloadStep } from '../lifecycle/index.js';

const CREDENTIAL_KEYS = ['api.auth.username', 'api.auth.password', 'api.auth.jwt.secret'];
const ENABLE_KEY = 'api.auth.enable';
const ENABLE_WHY = 'the API guard and the login routes are set up at start';

/**
 * The reload of `api.auth`: new username, password and JWT secret together (a new password with
 * the old secret is a new key as well), while authentication stays on or off. Turning it on or off
 * waits for the next start, and so do the credentials changed with it.
 */
export function credentialsReloadStep(
  running: Config,
  applyCredentials: (settings: Config['api']['auth']) => boolean,
): ReloadStep<Config> {
  return {
    name: 'auth',
    keys: [ENABLE_KEY, ...CREDENTIAL_KEYS],
    prepare(next, changed): PreparedReload {
      if (next.api.auth.enable !== running.api.auth.enable) {
        return {
          commit: () => undefined,
          abort: () => undefined,
          deferred: changed.map((key) => ({
            key,
            why: key === ENABLE_KEY ? ENABLE_WHY : `changed together with ${ENABLE_KEY}`,
          })),
        };
      }
      return { commit: () => void applyCredentials(next.api.auth), abort: () => undefined };
    },
  };
}
