import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import {
  absoluteOutputAddress,
  parseOutputReference,
  buildCommand,
  withInputHeader,
  resolveConfig,
  type PlaceholderValues,
  type ProcessConfig,
} from '../config/index.js';
import {
  type CredentialMask,
  serverOptions,
  type EncoderInfo,
  readProcessUsage,
  ProcessReport,
  type SpawnFn,
  type ProcessState,
  Supervisor,
  type PreparedRun,
} from '../supervise/index.js';
import type { ProcessEntry } from './process-entry.js';
import { VstatsChannel } from '../progress/index.js';

/** Bounds on what one child's output may cost the server (see run.ts). */
export const OUTPUT_BUDGET = { maxLineLength: 8192, linesPerSecond: 1000, bytesPerSecond: 1024 * 1024 };

export interface EntryFactoryDeps {
  config: Config;
  logger: Logger;
  spawn: SpawnFn;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  procRoot: string;
  cpus: number;
  /** Real absolute disk directory: working directory of the children, base of relative outputs. */
  diskRoot: string;
  placeholders: () => PlaceholderValues;
  encoder: () => EncoderInfo;
  /** The config of another process, for input references. */
  lookup: (id: string) => ProcessConfig | undefined;
  onStateChange: (to: ProcessState) => void;
  /** Hides credentials in log lines, command lines and stream addresses. */
  mask: CredentialMask;
}

/**
 * Makes the runtime of a process from its config: report, supervisor, `-vstats` FIFO, and the
 * command line of each run (placeholders resolved and references followed at every start).
 */
export class EntryFactory {
  /** Directory of the `-vstats` FIFOs, made on first use. */
  private fifoDir: Promise<string | undefined> | undefined;
  private fifoCount = 0;

  constructor(private readonly deps: EntryFactoryDeps) {}

  async create(
    config: ProcessConfig,
    times: { createdAt: number; updatedAt: number; metadata: Record<string, unknown> },
  ): Promise<ProcessEntry> {
    const deps = this.deps;
    const report = new ProcessReport(
      { maxLines: deps.config.ffmpeg.log.max_lines, maxHistory: deps.config.ffmpeg.log.max_history },
      Math.floor(deps.now() / 1000),
      deps.mask,
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
      (vstatsPath) => this.prepare(config, vstatsPath),
      report,
      {
        spawn: deps.spawn,
        now: deps.now,
        logger: deps.logger,
        readUsage: (pid) => readProcessUsage(deps.procRoot, pid),
        cpus: deps.cpus,
        budget: OUTPUT_BUDGET,
        mask: deps.mask,
        onStateChange: (_from, to) => deps.onStateChange(to),
      },
    );
    const entry: ProcessEntry = { config, ...times, report, supervisor };
    await this.attachVstats(entry);
    return entry;
  }

  /** The command line of the next run; throws when an input reference resolves to nothing. */
  prepare(config: ProcessConfig, vstatsPath?: string): PreparedRun {
    const placeholders = this.deps.placeholders();
    const resolved = this.resolveInputs(config);
    const disk = this.deps.diskRoot;
    // Named so that the server can meter what each input reads from memfs (input-read-meter.ts).
    resolved.input = resolved.input.map((input, index) =>
      withInputHeader(input, index, resolved.id, placeholders.memfs),
    );
    return {
      args: buildCommand(resolved, serverOptions(this.deps.encoder(), vstatsPath), disk),
      labels: {
        inputs: resolved.input.map((io) => ({ id: io.id, address: this.deps.mask(io.address) })),
        outputs: resolved.output.map((io) => ({ id: io.id, address: this.deps.mask(io.address) })),
      },
    };
  }

  /**
   * What a probe runs: the global options, then each input's options, `-i` and address, all
   * placeholders and input references resolved (no outputs). Throws like `prepare`.
   */
  probeArgs(config: ProcessConfig): string[] {
    const resolved = this.resolveInputs(config);
    return [
      ...resolved.options,
      ...resolved.input.flatMap((input) => [...input.options, '-i', input.address]),
    ];
  }

  /** The config with placeholders resolved and inputs that refer to another process's output made addresses. */
  private resolveInputs(config: ProcessConfig): ProcessConfig {
    const placeholders = this.deps.placeholders();
    const resolved = resolveConfig(config, placeholders);
    const disk = this.deps.diskRoot;
    resolved.input = resolved.input.map((input) => {
      const reference = parseOutputReference(input.address);
      if (reference === undefined) return input;
      const other = this.deps.lookup(reference.processId);
      const output =
        other === undefined
          ? undefined
          : resolveConfig(other, placeholders).output.find(
              (candidate) => candidate.id === reference.outputId,
            );
      if (output === undefined) throw new Error(`input "${input.id}": ${input.address} refers to nothing`);
      return { ...input, address: absoluteOutputAddress(output.address, disk) };
    });
    return resolved;
  }

  /** Removes the FIFO directory (after every supervisor is disposed). */
  async close(): Promise<void> {
    const dir = await this.fifoDir;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }

  /** Opens the process's `-vstats` FIFO; without one it runs without per-frame statistics. */
  private async attachVstats(entry: ProcessEntry): Promise<void> {
    this.fifoDir ??= mkdtemp(join(tmpdir(), 'streamcore-vstats-')).catch((error: unknown) => {
      this.deps.logger.warn(
        { err: error },
        'no directory for -vstats FIFOs; per-stream video statistics are off',
      );
      return undefined;
    });
    const dir = await this.fifoDir;
    if (dir === undefined) return;
    const channel = await VstatsChannel.open(join(dir, `${++this.fifoCount}.fifo`), {
      maxLineLength: OUTPUT_BUDGET.maxLineLength,
      bytesPerSecond: OUTPUT_BUDGET.bytesPerSecond,
      onLine: (line) => entry.supervisor.onVstatsLine(line),
    });
    if (channel !== undefined) entry.supervisor.attachVstats(channel);
  }
}
