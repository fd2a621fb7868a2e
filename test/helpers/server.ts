import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { buildApp, type App, type AppDeps } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { AnswerCheck } from './answer-check.js';
import { ConfigReaderDifferential } from './config-reader-differential.js';
import type { LogBuffer } from '../../src/log/index.js';
import type { Schedule } from '../../src/process/index.js';
import type { Timers } from '../../src/events/index.js';

export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K];
};

export interface TestServer {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  app: App;
  config: Config;
  /** Temporary directory holding config, db and disk storage; removed by `close`. */
  dir: string;
  close(): Promise<void>;
}

export interface StartOptions {
  config?: DeepPartial<Config>;
  env?: Record<string, string>;
  /** Reuse a directory (e.g. to restart a server on the same db); it is not removed on close. */
  dir?: string;
  now?: () => number;
  /** The process supervision's timers, on the clock of `now` (see test/helpers/test-clock.ts). */
  schedule?: Schedule;
  procRoot?: string;
  /** Root of the cgroup v2 hierarchy the host collectors read (fixtures). */
  cgroupRoot?: string;
  /** The server's logger (e.g. to read its lines); default: pino at TEST_LOG_LEVEL, silent. */
  logger?: Logger;
  /** The built dashboard's directory (default: the server's, `dist/web/dashboard`). */
  dashboardDir?: string;
  /** The buffer `logger` feeds (see `createServerLogger`), answered by `GET /api/v3/log`. */
  logBuffer?: LogBuffer;
  /**
   * Check every answer against the API description (default). Benchmarks turn it off: the check
   * costs far more than most answers themselves and would be what they measure.
   */
  checkAnswers?: boolean;
  /** How HTTPS watches certificate files and which roots earn HSTS (AppDeps.tls). */
  tls?: AppDeps['tls'];
  /** The webhooks' timers (time-outs, back-off), e.g. faster ones. */
  eventTimers?: Timers;
  /** How API workers are started (AppDeps.apiWorkerEntry); without it the server has none. */
  apiWorkerEntry?: AppDeps['apiWorkerEntry'];
}

/** Starts the real server on 127.0.0.1 with a free port and a private temporary directory. */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'streamcore-test-')));
  const configFile = join(dir, 'config.json');
  const existing = await readFile(configFile, 'utf8').then(
    (text) => JSON.parse(text) as Record<string, unknown>,
    () => ({}),
  );
  const fileConfig = deepMerge(existing, {
    address: '127.0.0.1:0',
    db: { dir: join(dir, 'db') },
    storage: { disk: { dir: join(dir, 'data') } },
  });
  deepMergeInto(fileConfig, options.config ?? {});
  await mkdir(join(dir, 'data'), { recursive: true });
  await writeFile(configFile, JSON.stringify(fileConfig));
  const env = { ...options.env, CORE_CONFIGFILE: configFile };
  const loaded = await loadConfig(env, dir);
  const { config } = loaded;
  const logger = options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  // Every answer of every test server is checked against the API description (issue 15).
  const answers = new AnswerCheck();
  // And every process config body is read by the hand-written reader too (issue 25).
  const readers = new ConfigReaderDifferential();
  const app = await buildApp(config, {
    logger,
    inspectAnswer:
      options.checkAnswers === false
        ? undefined
        : (request, reply, payload, done) => {
            readers.inspect(request);
            answers.hook.call(app.server, request, reply, payload, done);
          },
    now: options.now,
    schedule: options.schedule,
    procRoot: options.procRoot,
    cgroupRoot: options.cgroupRoot,
    dashboardDir: options.dashboardDir,
    logBuffer: options.logBuffer,
    tls: options.tls,
    eventTimers: options.eventTimers,
    apiWorkerEntry: options.apiWorkerEntry,
    configFile,
    configSource: { file: configFile, fileJson: loaded.fileJson, overrides: loaded.overrides, env, cwd: dir },
  });
  let url: string;
  try {
    url = await app.listen();
  } catch (error) {
    // A start that fails (a test of the failure) leaves nothing running.
    await app.close();
    if (ownDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    app,
    config,
    dir,
    async close() {
      await app.close();
      if (ownDir) await rm(dir, { recursive: true, force: true });
      if (answers.mismatches.length > 0) {
        throw new Error(
          `answers that do not match the API description:\n${JSON.stringify(answers.mismatches, null, 1)}`,
        );
      }
      if (readers.disagreements.length > 0) {
        throw new Error(
          `process config bodies the schema and the hand-written reader read differently:\n${JSON.stringify(readers.disagreements, null, 1)}`,
        );
      }
    },
  };
}

function deepMerge(
  base: Record<string, unknown>,
  override: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = result[key];
    result[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return result;
}

function deepMergeInto(target: Record<string, unknown>, override: Record<string, unknown>): void {
  Object.assign(target, deepMerge(target, override));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
