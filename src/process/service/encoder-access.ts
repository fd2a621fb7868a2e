import { networkInterfaces } from 'node:os';
import { dirname } from 'node:path';
import { resolveBindAddress, type Config } from '../../config/index.js';
import {
  checkEncoderAccess,
  compileAccessRules,
  isInside,
  type AccessContext,
  type AccessRules,
  type EncoderCommand,
} from '../access/index.js';
import { memfsPathProblems, parseOutputReference, type ProcessConfig } from '../config/index.js';

export interface EncoderAccessDeps {
  config: Config;
  /** The disk filesystem's real directory: the encoders' working directory. */
  diskRoot: string;
  /** The config file (it holds the JWT secret and the passwords), when the server knows it. */
  configFile?: string;
  /** `{memfs}` as it is now. */
  memfsUrl: () => string;
  /** `{fs:<name>}` of an S3 filesystem as it is now. */
  s3Url: (name: string) => string;
}

/**
 * What the encoder access policy (issue 10 item 2) checks a process against: the directories
 * encoders may use, the ones they must never touch, the user's `ffmpeg.access.*` rules, and this
 * server's own port and addresses (SSRF into its API). The port is the configured one until the
 * server listens, then the one it listens on (a configured `:0` becomes known only then).
 */
export class EncoderAccess {
  private readonly rules: AccessRules;
  private readonly protectedDirs: string[];
  private port: number;

  constructor(private readonly deps: EncoderAccessDeps) {
    this.rules = compileAccessRules(deps.config.ffmpeg.access);
    this.port = resolveBindAddress(deps.config).port;
    this.protectedDirs = protectedPlaces(deps);
  }

  /** The server listens at `baseUrl` (`http://host:port`). */
  listening(baseUrl: string): void {
    this.port = Number(new URL(baseUrl).port);
  }

  /**
   * Every reason the encoder of `resolved` (placeholders resolved) must not run, as
   * `<field path> "<address as written>": <reason>`; empty when it may.
   */
  check(resolved: ProcessConfig, written: ProcessConfig): string[] {
    const problems = processAccessProblems(resolved, written, this.context());
    // With auth on, each run writes with a credential for its outputs' own paths only.
    const guarded = [
      ...(this.deps.config.storage.memory.auth.enable ? [this.deps.memfsUrl()] : []),
      ...this.deps.config.storage.s3.flatMap((s3) => (s3.auth.enable ? [this.deps.s3Url(s3.name)] : [])),
    ];
    return [...problems, ...guarded.flatMap((base) => memfsPathProblems(resolved, base))];
  }

  context(): AccessContext {
    const config = this.deps.config;
    return {
      diskRoots: [this.deps.diskRoot, config.storage.disk.dir],
      protectedDirs: this.protectedDirs,
      own: {
        port: this.port,
        memfsPath: '/memfs',
        s3Paths: config.storage.s3.map((s3) => s3.mountpoint.replace(/\/+$/, '')),
        localAddresses: interfaceAddresses(),
      },
      rules: this.rules,
    };
  }
}

/**
 * The policy applied to a process config. Inputs that name another process's output
 * (`#id:output=out`) have only their options checked: that address was checked as an output.
 */
export function processAccessProblems(
  resolved: ProcessConfig,
  written: ProcessConfig,
  context: AccessContext,
): string[] {
  return checkEncoderAccess(encoderCommand(resolved), encoderCommand(written), context);
}

function encoderCommand(config: ProcessConfig): EncoderCommand {
  return {
    options: config.options,
    input: config.input.map((input) => ({
      address: input.address,
      options: input.options,
      reference: parseOutputReference(input.address) !== undefined,
      fallback: input.fallback,
    })),
    output: config.output,
  };
}

/**
 * Places no encoder may read or write even inside an allowed directory: the db directory (with
 * the encoders' pid files), the metrics history, the TLS key, and the config file. The config
 * file's whole directory (its atomic-write temporaries too) when that does not hold the disk
 * directory; otherwise only the file, so that a config beside the data does not close the data.
 */
export function protectedPlaces(deps: Omit<EncoderAccessDeps, 'memfsUrl' | 's3Url'>): string[] {
  const config = deps.config;
  const places = [config.db.dir, config.metrics.history.dir];
  if (config.tls.key_file !== '') places.push(config.tls.key_file);
  if (deps.configFile !== undefined) {
    const dir = dirname(deps.configFile);
    const holdsData = [deps.diskRoot, config.storage.disk.dir].some((root) => isInside(root, dir));
    places.push(holdsData ? deps.configFile : dir);
  }
  return places;
}

/**
 * The machine's own addresses, read at every check: an interface that came up since start is
 * this server too. Loopback is recognised by the policy in every spelling on its own.
 */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) =>
    (list ?? []).map((entry) => entry.address.replace(/%.*$/, '')),
  );
}
