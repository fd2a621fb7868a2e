import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { EventSink } from '../../events/index.js';
import {
  parseOutputReference,
  buildCommand,
  memfsPrefixes,
  resolveConfig,
  withInputHeader,
  withUserInfo,
  type PlaceholderValues,
  type ProcessConfig,
} from '../config/index.js';
import {
  createCredentialMask,
  type CredentialMask,
  serverOptions,
  type EncoderInfo,
  readProcessUsage,
  ProcessReport,
  memfsSecrets,
  RunCredentialMask,
  type SpawnFn,
  type ProcessState,
  Supervisor,
  timeout,
  type PreparedRun,
  type Schedule,
} from '../supervise/index.js';
import type { MemfsWriteGrants, WriteGrant } from '../../storage/index.js';
import type { ProcessEntry } from './process-entry.js';
import { VstatsFifos } from './vstats-fifos.js';
import { InputReferences } from './input-references.js';
import { RunCredentials } from './run-credentials.js';
import { LiveInputs, RelayedInputs, type LocalStreams } from '../fallback/index.js';

/** One probe's command line, prepared as a run's (placeholders resolved, its own credentials). */
export interface PreparedProbe {
  /** Global options, then each input's options, `-i` and address. */
  args: string[];
  /** Hides credentials, the probe's own among them, in a line of the answered log. */
  mask: CredentialMask;
  /** Ends the probe's own credentials; called once it exited. */
  release: () => void;
}

/** Bounds on what one child's output may cost the server (see run.ts). */
const OUTPUT_BUDGET = { maxLineLength: 8192, linesPerSecond: 1000, bytesPerSecond: 1024 * 1024 };

export interface EntryFactoryDeps {
  config: Config;
  logger: Logger;
  spawn: SpawnFn;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  /** The supervisors' timers, on the clock of `now` (default the real `setTimeout`). */
  schedule?: Schedule;
  procRoot: string;
  cpus: number;
  /** Real absolute disk directory: working directory of the children, base of relative outputs. */
  diskRoot: string;
  /** The server-wide placeholder values as they are now (`{memfs}` among them). */
  placeholders: () => PlaceholderValues;
  /** Issues each run its memfs write credential; undefined when memfs writes need none. */
  memfsGrants: MemfsWriteGrants | undefined;
  encoder: () => EncoderInfo;
  /** The resolved config of another process, for input references. */
  lookup: (id: string) => ProcessConfig | undefined;
  /** The stored config of another process (placeholders kept), resolved again for a run. */
  lookupStored: (id: string) => ProcessConfig | undefined;
  onStateChange: (to: ProcessState) => void;
  /** Where each state change goes as a process event. */
  events?: EventSink;
  /** Hides credentials in log lines, command lines and stream addresses. */
  mask: CredentialMask;
  /** The ingest servers' own streams, which an input's fallback relay reads without a feeder. */
  localStreams?: LocalStreams;
}

/**
 * Makes the runtime of a process from its config: report, supervisor, `-vstats` FIFO
 * (vstats-fifos.ts), and the command line of each run and probe from the entry's config
 * (references to other processes' outputs followed at every start, input-references.ts).
 * Just past 300 lines: the command lines are assembled here from one resolution of the config
 * (placeholders, the run's credentials and mask, the fallback relay), and splitting the steps
 * would scatter one order that must stay as it is; the supervisor's wiring is the rest.
 */
export class EntryFactory {
  private readonly vstats: VstatsFifos;
  /** `userCommand` of resolved configs without references (not to be modified by callers). */
  private readonly userCommands = new WeakMap<ProcessConfig, string[]>();

  /** Relays in front of the inputs that have a fallback. */
  private readonly relays: RelayedInputs;
  private readonly references: InputReferences;

  constructor(private readonly deps: EntryFactoryDeps) {
    this.references = new InputReferences(deps);
    this.vstats = new VstatsFifos(deps.logger, {
      maxLineLength: OUTPUT_BUDGET.maxLineLength,
      bytesPerSecond: OUTPUT_BUDGET.bytesPerSecond,
    });
    this.relays = new RelayedInputs({
      binary: deps.config.ffmpeg.binary,
      cwd: deps.diskRoot,
      spawn: deps.spawn,
      logger: deps.logger,
      now: deps.now,
      monotonic: () => performance.now(),
      mask: deps.mask,
      localStreams: deps.localStreams,
    });
  }

  async create(
    config: ProcessConfig,
    resolved: ProcessConfig,
    times: { createdAt: number; updatedAt: number; metadata: Record<string, unknown> },
  ): Promise<ProcessEntry> {
    const deps = this.deps;
    // The process's own mask: it also hides the memfs credential of its latest run.
    const runMask = new RunCredentialMask(deps.mask);
    // The running config's section, which a reload updates in place: read on every line and run.
    const log = deps.config.ffmpeg.log;
    const report = new ProcessReport(
      {
        get maxLines() {
          return log.max_lines;
        },
        get maxHistory() {
          return log.max_history;
        },
      },
      Math.floor(deps.now() / 1000),
      runMask.mask,
    );
    const supervisor = new Supervisor(
      {
        binary: deps.config.ffmpeg.binary,
        cwd: deps.diskRoot,
        reconnect: config.reconnect,
        reconnectDelayMs: config.reconnect_delay_seconds * 1000,
        staleTimeoutMs: config.stale_timeout_seconds * 1000,
        limits: {
          cpuPercent: config.limits.cpu_usage,
          memoryBytes: config.limits.memory_mbytes * 1024 * 1024,
          waitforMs: config.limits.waitfor_seconds * 1000,
        },
      },
      // The entry's resolved config as it is at each start (the service resolves loaded
      // processes again once the server listens).
      (vstatsPath) => this.prepare(entry, vstatsPath, runMask),
      report,
      {
        spawn: deps.spawn,
        now: deps.now,
        schedule: deps.schedule ?? timeout,
        logger: deps.logger,
        readUsage: (pid) => readProcessUsage(deps.procRoot, pid),
        cpus: deps.cpus,
        budget: OUTPUT_BUDGET,
        mask: runMask.mask,
        onStateChange: (from, to) => {
          // One line per change, as the reference logs a process's life (Starting, Started, Failed,
          // Killed…): the UI's Logs tab and `GET /api/v3/log` show when and why a channel stopped.
          const reason = to === 'failed' || to === 'killed' ? { last_logline: report.lastLogLine } : {};
          deps.logger.info(
            { component: 'process', id: config.id, reference: config.reference, from, to, ...reason },
            `process ${to}`,
          );
          deps.onStateChange(to);
          deps.events?.publish('process', 'state', {
            id: config.id,
            reference: config.reference,
            state: to,
            from,
            ...(to === 'failed' ? { reason: lastNote(report), last_line: report.lastLogLine } : {}),
          });
        },
      },
    );
    const entry: ProcessEntry = {
      config,
      resolved,
      createdAt: times.createdAt,
      updatedAt: times.updatedAt,
      metadata: times.metadata,
      metadataRevision: 0,
      report,
      supervisor,
      liveInputs: new LiveInputs(config.input),
    };
    await this.vstats.attach(entry.supervisor);
    return entry;
  }

  /**
   * The command line of the next run of a process, from its resolved config; throws when an input
   * reference resolves to nothing. A run whose outputs write into memfs gets a credential of its
   * own for their paths (its `{memfs}` in outputs carries it), revoked by `release` once it exits,
   * and masked by `runMask`.
   */
  prepare(entry: ProcessEntry, vstatsPath?: string, runMask?: RunCredentialMask): PreparedRun {
    const values = this.deps.placeholders();
    // The memfs write credential, and the ingest tokens `{rtmp}` and `{srt}` write.
    const credentials = new RunCredentials();
    try {
      const grant = this.issueGrant(entry.resolved, values, credentials);
      const config = resolveConfig(entry.config, {
        ...values,
        run: credentials,
        ...(grant === undefined
          ? {}
          : {
              memfsWrite: withUserInfo(values.memfs, grant),
              s3Write: Object.fromEntries(
                Object.entries(values.s3 ?? {}).map(([name, url]) => [name, withUserInfo(url, grant)]),
              ),
            }),
      });
      const resolved = this.references.follow(config, credentials);
      runMask?.replace(credentials.secrets());
      // Named so that the server can meter what each input reads from memfs (input-read-meter.ts).
      resolved.input = resolved.input.map((input, index) => ({
        ...withInputHeader(input, index, resolved.id, values.memfs),
        fallback: input.fallback,
      }));
      const mask = runMask?.mask ?? this.deps.mask;
      const labels = {
        inputs: resolved.input.map((io) => ({ id: io.id, address: mask(io.address) })),
        outputs: resolved.output.map((io) => ({ id: io.id, address: mask(io.address) })),
      };
      const relayed = this.relays.relay(resolved, entry.liveInputs, entry.report);
      return {
        args: buildCommand(
          relayed.config,
          serverOptions(this.deps.encoder(), vstatsPath),
          this.deps.diskRoot,
        ),
        labels,
        pipes: relayed.pipes,
        release: () => {
          relayed.stop();
          credentials.revoke();
        },
      };
    } catch (error) {
      credentials.revoke();
      throw error;
    }
  }

  /**
   * A write credential for the paths the outputs of `config` name on the writable mounts (memfs
   * and the S3 mountpoints), as URL paths with the mount (`/memfs/live/a`), one of the run's
   * `credentials`; undefined when none.
   */
  private issueGrant(
    config: ProcessConfig,
    values: PlaceholderValues,
    credentials: RunCredentials,
  ): WriteGrant | undefined {
    const grants = this.deps.memfsGrants;
    if (grants === undefined) return undefined;
    const bases = [values.memfs, ...Object.values(values.s3 ?? {})];
    const prefixes = config.output.flatMap((output) =>
      bases.flatMap((base) => {
        const mount = new URL(base).pathname.replace(/\/+$/, '');
        return memfsPrefixes(output, base).map((prefix) => mount + prefix);
      }),
    );
    if (prefixes.length === 0) return undefined;
    return credentials.credential(grants, () => {
      const grant = grants.issue(prefixes);
      return { ...grant, secrets: memfsSecrets({ enable: true, ...grant }) };
    });
  }

  /**
   * The user's command of a resolved config, as the reference's `state.command` shows it: what
   * follows the binary, without the server's own options (`-progress`, `-vstats_file`, the memfs
   * input headers), input references followed, credentials masked; the UI prefixes `ffmpeg ` and
   * offers it to copy. Shared with the caller (not to be modified). Throws like `prepare`.
   */
  userCommand(config: ProcessConfig): string[] {
    const kept = this.userCommands.get(config);
    if (kept !== undefined) return kept;
    const command = buildCommand(this.references.follow(config), [], this.deps.diskRoot).map(this.deps.mask);
    // Without references to other processes' outputs, the command follows from the resolved
    // config alone (replaced, never modified, on every change): it is asked for with every state.
    if (!config.input.some((input) => parseOutputReference(input.address) !== undefined)) {
      this.userCommands.set(config, command);
    }
    return command;
  }

  /**
   * What a probe of a stored config runs: the global options, then each input's options, `-i` and
   * address, placeholders resolved for the probe as for a run (its own ingest tokens, revoked by
   * `release`, hidden by `mask`), input references followed (no outputs). Throws like `prepare`.
   */
  prepareProbe(config: ProcessConfig): PreparedProbe {
    const credentials = new RunCredentials();
    try {
      const resolved = this.references.follow(
        resolveConfig(config, { ...this.deps.placeholders(), run: credentials }),
        credentials,
      );
      const literals = createCredentialMask(credentials.secrets());
      return {
        args: [
          ...resolved.options,
          ...resolved.input.flatMap((input) => [...input.options, '-i', input.address]),
        ],
        mask: (text) => this.deps.mask(literals(text)),
        release: () => credentials.revoke(),
      };
    } catch (error) {
      credentials.revoke();
      throw error;
    }
  }

  /** Removes the FIFO directory (after every supervisor is disposed). */
  close(): Promise<void> {
    return this.vstats.close();
  }
}

/** The server's own note on how the current run ended (`streamcore: exited with code 1`), or ''. */
function lastNote(report: ProcessReport): string {
  const log = report.currentRun().log;
  const line = log[log.length - 1]?.[1] ?? '';
  return line.startsWith('streamcore: ') ? line : '';
}
