import type { SpawnFn } from './spawn.js';

/** The server's config variables (`CORE_API_AUTH_PASSWORD`, `CORE_API_AUTH_JWT_SECRET`, …). */
const SERVER_ENV_PREFIX = 'CORE_';

/**
 * Variables an encoder must not inherit: `FFREPORT` makes ffmpeg write `ffmpeg-*.log`, with its
 * whole command line, into its working directory (the disk filesystem, served to anyone), the
 * same as `-report`, which the access policy refuses.
 */
const ENCODER_DENIED_ENV: ReadonlySet<string> = new Set(['FFREPORT']);

/** `env` without the server's own config variables and those an encoder must not see. */
export function withoutServerVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(SERVER_ENV_PREFIX) && !ENCODER_DENIED_ENV.has(name)) kept[name] = value;
  }
  return kept;
}

/**
 * Starts children without the server's `CORE_*` variables (nor `FFREPORT`): secrets set through
 * the environment are none of an encoder's business, and with the sandbox off a command that reads
 * `/proc/self/environ` (or logs its environment) would show them. The one place they are removed,
 * below the sandbox's and the parent-death signal's wrappers (encoder-spawn.ts).
 */
export function withoutServerEnvironment(spawn: SpawnFn): SpawnFn {
  return (command, args, options) =>
    spawn(command, args, { ...options, env: withoutServerVariables(options.env ?? process.env) });
}
