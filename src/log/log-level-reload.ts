import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { ReloadStep } from '../lifecycle/index.js';

/** `log.level` on a reload: the server's logger (stdout and `GET /api/v3/log`) takes it at once. */
export function logLevelReloadStep(logger: Logger): ReloadStep<Config> {
  return {
    name: 'log',
    keys: ['log.level'],
    prepare: (next) => ({ commit: () => void (logger.level = next.log.level), abort: () => undefined }),
  };
}
