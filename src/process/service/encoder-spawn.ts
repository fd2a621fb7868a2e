import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import {
  probeParentDeathSignal,
  probeSandbox,
  realProgram,
  withParentDeathSignal,
  withoutServerEnvironment,
  withSandbox,
  type SandboxPlaces,
  type SpawnFn,
} from '../supervise/index.js';
import { protectedPlaces } from './encoder-access.js';

export interface EncoderSpawnDeps {
  config: Config;
  /** The config file, hidden from encoders like the other protected places. */
  configFile?: string;
  logger: Logger;
  /** `child_process.spawn`. */
  spawn: SpawnFn;
  /** The programs, by name in PATH unless a test names others. */
  setpriv?: string;
  bwrap?: string;
}

/** How encoders are started, and whether the sandbox is on (logged at start, docs/security.md). */
export interface EncoderSpawn {
  spawn: SpawnFn;
  sandboxed: boolean;
}

/**
 * Composes how every encoder is started, probing once what the machine allows: inside bubblewrap
 * (`ffmpeg.sandbox`: `auto` where it works, `on` or refuse to start, `off` never) and with the
 * parent-death signal (`setpriv`), so that bwrap, or the encoder itself, dies with the server.
 * Throws, with what to do, when `ffmpeg.sandbox` is `on` and bubblewrap does not work here, and
 * when the sandbox works but the encoder binary cannot run inside (`ffmpeg.binary` in a hidden
 * place, or its libraries outside what the sandbox shows): encoders would never run, and turning
 * the sandbox off for it is the operator's call.
 */
export async function createEncoderSpawn(deps: EncoderSpawnDeps): Promise<EncoderSpawn> {
  const { config, logger } = deps;
  const setpriv = deps.setpriv ?? 'setpriv';
  const bwrap = deps.bwrap ?? 'bwrap';
  const mode = config.ffmpeg.sandbox;
  const places = sandboxPlaces(deps);
  // A binary that is not there is no sandbox problem: its processes fail with ENOENT, as without.
  const program = realProgram(config.ffmpeg.binary, process.env.PATH ?? '');
  // Both probes at once (about 20 and 60 ms here, the second running the binary).
  const [parentDeath, problem] = await Promise.all([
    probeParentDeathSignal(deps.spawn, setpriv),
    mode === 'off' ? undefined : probeSandbox(deps.spawn, bwrap, places, program),
  ]);
  // Outside the sandbox too, encoders never see the server's CORE_* variables (secrets among them).
  let spawn = withoutServerEnvironment(deps.spawn);
  if (parentDeath) spawn = withParentDeathSignal(spawn, setpriv);
  else
    logger.warn('setpriv --pdeathsig is not available: encoders outlive a crashed server until its restart');

  if (mode === 'off') {
    logger.info(
      { sandbox: 'off' },
      'encoder sandbox off (ffmpeg.sandbox): only the access policy confines encoders',
    );
    return { spawn, sandboxed: false };
  }
  if (problem?.kind === 'program-unusable') {
    throw new Error(
      `ffmpeg.binary "${config.ffmpeg.binary}" cannot run in the encoder sandbox (${problem.message}); ` +
        "the sandbox shows /usr, /bin, /sbin, /lib*, the binary's own directory and ffmpeg.access.*.paths, " +
        "never db.dir, metrics.history.dir, tls.key_file or the config file's directory: install the " +
        'binary, its interpreter and its libraries where it shows them, or set ffmpeg.sandbox to "off"',
    );
  }
  if (problem !== undefined) {
    if (mode === 'on') {
      throw new Error(
        `ffmpeg.sandbox is "on", but bubblewrap cannot confine encoders here (${problem.message}); ` +
          'install Debian\'s bubblewrap, or set ffmpeg.sandbox to "auto" or "off"',
      );
    }
    logger.warn(
      { sandbox: 'off', reason: problem.message },
      'encoder sandbox off: bubblewrap does not work here (ffmpeg.sandbox is "auto"); only the access policy confines encoders',
    );
    return { spawn, sandboxed: false };
  }
  logger.info(
    {
      sandbox: 'on',
      readable: places.readable(),
      writable: places.writable(),
      hidden: places.hidden(),
      hostDevices: places.hostDevices,
    },
    'encoder sandbox on: every encoder runs in bubblewrap and sees of the host only its programs, libraries and their settings, the readable and the writable places, never the hidden ones',
  );
  return { spawn: withSandbox(spawn, bwrap, places), sandboxed: true };
}

/**
 * Writable: the disk directory and `ffmpeg.access.output.paths`; readable:
 * `ffmpeg.access.input.paths`. Hidden:
 * what the access policy protects (db, metrics history, TLS key, config file or its directory).
 * The host's `/dev` only when `ffmpeg.access.devices` allows device formats.
 */
export function sandboxPlaces(deps: Pick<EncoderSpawnDeps, 'config' | 'configFile'>): SandboxPlaces {
  const { config, configFile } = deps;
  // Made before the storage is (bwrap is probed while the server is built): the configured
  // directory, resolved like the storage resolves it; the mounts use real paths.
  const diskRoot = resolve(config.storage.disk.dir);
  const hidden = protectedPlaces({ config, diskRoot, configFile });
  return {
    readable: () => config.ffmpeg.access.input.paths,
    writable: () => [diskRoot, ...config.ffmpeg.access.output.paths],
    hidden: () => hidden,
    hostDevices: config.ffmpeg.access.devices.length > 0,
  };
}
