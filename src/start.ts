// Only the config loader is imported up front: an invalid config is reported and the process exits
// before the server's modules (fastify, the routes, their schemas) are evaluated at all (issue 11;
// in the built server they are compiled with the rest of the bundle, from the code cache).
import type { StartHooks } from './boot/start-hooks.js';
import { ConfigError, loadConfig } from './config/index.js';
// Only a constant: the worker's modules are loaded by the worker alone.
import { WORKER_ENV as API_WORKER_ENV } from './api-workers/messages.js';

/** How many recent log lines `GET /api/v3/log` can show (the reference's `log.max_lines` default). */
const LOG_BUFFER_LINES = 1000;
/** Time between two trims of the malloc arenas (malloc/trimmer.ts), ms. */
const MALLOC_TRIM_INTERVAL_MS = 2000;

/**
 * Starts the server; a failure to start is printed on stderr and exits with code 1. Run by
 * src/main.ts (tsx, tests) and by the built entry (dist/main.js, through its code cache).
 */
export function runServer(hooks: StartHooks = {}): void {
  // The same entry runs the API workers the server forks (api-workers/worker-pool.ts).
  if (process.env[API_WORKER_ENV] === '1' && process.send !== undefined) {
    void runWorker();
    return;
  }
  main(hooks).catch((error: unknown) => {
    process.stderr.write(
      `streamcore failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}

/** An API worker: it gets its config from the main process, never from the file. */
async function runWorker(): Promise<void> {
  const [{ runApiWorker }, { API_CONTRACTS }] = await Promise.all([
    import('./api-workers/index.js'),
    import('./api-contracts.js'),
  ]);
  runApiWorker(API_CONTRACTS);
}

/** Loads config, builds the app, listens, and handles signals. Nothing else (STYLE §3). */
async function main(hooks: StartHooks): Promise<void> {
  let loaded;
  try {
    loaded = await loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`config: ${problem}\n`);
      process.exit(1);
    }
    throw error;
  }

  const [{ buildApp }, { createServerLogger, LogBuffer }, { loadMallocTrimAddon, MallocTrimmer }] =
    await Promise.all([import('./app.js'), import('./log/index.js'), import('./malloc/index.js')]);
  const logBuffer = new LogBuffer(LOG_BUFFER_LINES);
  const logger = createServerLogger(loaded.config.log.level, logBuffer);

  // A fault outside a request (a timer, a child's stream) is logged; it must not take down the
  // server and every encoder with it (docs/api.md#conventions).
  process.on('uncaughtException', (error) => logger.error({ err: error }, 'uncaught exception'));
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

  if (loaded.firstStartLogin !== undefined) printFirstStartLogin(loaded.firstStartLogin, loaded.file);

  const app = await buildApp(loaded.config, {
    logger,
    logBuffer,
    configFile: loaded.file,
    configSource: {
      file: loaded.file,
      fileJson: loaded.fileJson,
      overrides: loaded.overrides,
      env: process.env,
      cwd: process.cwd(),
    },
    // The workers run this same entry with the same options (tsx from source, the built bundle).
    apiWorkerEntry:
      process.argv[1] === undefined ? undefined : { modulePath: process.argv[1], execArgv: process.execArgv },
  });
  // Process-wide, not per app: the malloc arenas are the process's.
  const mallocTrim = loadMallocTrimAddon();
  let trimmer: InstanceType<typeof MallocTrimmer> | undefined;
  if ('reason' in mallocTrim) logger.info({ reason: mallocTrim.reason }, 'freed malloc memory is kept');
  else if (mallocTrim.addon.available) {
    trimmer = new MallocTrimmer(mallocTrim.addon, MALLOC_TRIM_INTERVAL_MS);
    trimmer.start();
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    trimmer?.stop();
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  // After the handlers: a supervisor that signals as soon as it reads this line gets a clean stop.
  const baseUrl = await app.listen();
  logger.info(
    { url: baseUrl, config: loaded.file, id: loaded.config.id, name: loaded.config.name },
    'streamcore listening',
  );
  hooks.listening?.(logger);
}

/**
 * Printed once, on the start that generated the credentials, on stderr as plain text (not in the
 * JSON log, which is often shipped elsewhere). The password stays in the 0600 config file.
 */
function printFirstStartLogin(login: { username: string; password: string }, file: string): void {
  process.stderr.write(
    [
      '',
      'streamcore: first start, API authentication is on.',
      `  username: ${login.username}`,
      `  password: ${login.password}`,
      `This password is shown only now; it is stored in ${file} (api.auth.password, mode 0600).`,
      '',
      '',
    ].join('\n'),
  );
}
