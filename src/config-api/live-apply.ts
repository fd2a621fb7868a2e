import type { Logger } from 'pino';
import { getPath, KEYS, setPath, type Config } from '../config/index.js';
import { ApiError } from '../http/index.js';
import type { PreparedReload, ReloadStep } from '../lifecycle/index.js';

/** A key a reload could not put into effect while running, and why (named in the log). */
export interface DeferredKey {
  key: string;
  why: string;
}

/** Why a key no reload step owns waits for the next start (docs/configuration.md#what-a-reload-applies). */
function whyAtStart(key: string): string {
  if (/^(rtmp|srt)\./.test(key)) return 'its listener is opened at start';
  if (/^cluster\./.test(key))
    return 'the node joins its cluster at start: etcd connection, lease and registration';
  return SET_UP_AT_START[key] ?? 'read once at start';
}

/** Keys of the Restreamer UI's Settings that wait for the next start, and why. */
const SET_UP_AT_START: Record<string, string> = {
  'storage.s3': 'the S3 filesystems are connected and mounted at start',
};

export interface LiveApplyDeps {
  /** The configuration the server runs with; applied keys are updated in it, in place. */
  running: Config;
  /** The modules' reload steps (`Lifecycle.reloadable`), prepared in this order. */
  steps: readonly ReloadStep<Config>[];
  logger: Logger;
}

/**
 * Puts a reloaded configuration into effect without stopping anything: processes and the
 * connections of clients keep running. Every step owning a changed key prepares its part from
 * `next`; when all could, the applied keys are written into the running config and all commit;
 * when one cannot, the others are aborted, nothing changes, and a 400 names the key and the
 * reason. Answers the changed keys that wait for the next start (logged by name, never value).
 */
export async function applyLive(next: Config, deps: LiveApplyDeps): Promise<DeferredKey[]> {
  const changed = KEYS.map((key) => key.path).filter(
    (path) => JSON.stringify(getPath(deps.running, path)) !== JSON.stringify(getPath(next, path)),
  );
  const affected = deps.steps.filter((step) => step.keys.some((key) => changed.includes(key)));
  const prepared: { step: ReloadStep<Config>; change: PreparedReload }[] = [];
  const problems: string[] = [];
  for (const step of affected) {
    try {
      const mine = changed.filter((key) => step.keys.includes(key));
      prepared.push({ step, change: await step.prepare(next, mine) });
    } catch (error) {
      problems.push(...problemsOf(error));
      break;
    }
  }
  if (problems.length > 0) {
    for (const { change } of prepared) await change.abort();
    deps.logger.warn({ problems }, 'configuration not reloaded: the running configuration stays');
    throw new ApiError('BAD_REQUEST', problems, { message: 'Config not applied' });
  }
  const deferred: DeferredKey[] = prepared.flatMap(({ change }) => change.deferred ?? []);
  const owned = new Set(deps.steps.flatMap((step) => step.keys));
  for (const key of changed) {
    if (!owned.has(key)) deferred.push({ key, why: whyAtStart(key) });
  }
  const applied = changed.filter((key) => !deferred.some((item) => item.key === key));
  // Before the commits: what they put into effect reads the running config (`{rtmp}` of the
  // processes resolved again, the limits read at use).
  for (const key of applied) setPath(deps.running, key, structuredClone(getPath(next, key)));
  for (const { change } of prepared) await change.commit();
  deps.logger.info({ applied, nextStart: deferred.map((item) => item.key) }, 'configuration reloaded');
  if (deferred.length > 0) {
    deps.logger.warn(
      { keys: deferred.map(({ key, why }) => `${key} (${why})`) },
      'configuration reloaded: these keys take effect at the next start of the server',
    );
  }
  return deferred;
}

function problemsOf(error: unknown): string[] {
  if (error instanceof Error && 'problems' in error && Array.isArray(error.problems)) {
    return error.problems.map(String);
  }
  return [error instanceof Error ? error.message : String(error)];
}
