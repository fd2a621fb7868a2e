import type { Logger } from 'pino';
import type { CredentialMask } from './credential-mask.js';
import type { ProcessUsageSample } from './proc-usage.js';
import { type IoLabels, emptyProgress, type ProgressValues, type VstatsChannel } from '../progress/index.js';
import type { ProcessReport } from './report.js';
import { ResourceWatch, type ResourceLimits } from './resource-watch.js';
import { FfmpegRun, type OutputBudget } from './run.js';
import type { SpawnFn } from './spawn.js';
import {
  canTransition,
  isActive,
  zeroStateCounts,
  type Order,
  type ProcessState,
  type StateCounts,
} from './states.js';

/** How long a stopped child gets between SIGINT and SIGKILL (SPEC §7.3). */
export const KILL_AFTER_MS = 5000;
/** Shortest wait before a reconnect, also when the configured delay is 0 (no busy loop). */
export const MIN_RECONNECT_MS = 1000;
/** How long to wait for the exit after SIGKILL before giving up on the child. */
const EXIT_AFTER_KILL_MS = 3000;

/** What the supervisor needs to know of a process config, in base units. */
export interface SupervisorSettings {
  binary: string;
  cwd: string;
  reconnect: boolean;
  reconnectDelayMs: number;
  /** 0 = off. */
  staleTimeoutMs: number;
  limits: ResourceLimits;
}

/** What a run needs, made fresh for every start (placeholders and references may have changed). */
export interface PreparedRun {
  args: string[];
  labels: IoLabels;
}

export interface SupervisorDeps {
  spawn: SpawnFn;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  logger: Logger;
  readUsage: (pid: number) => Promise<ProcessUsageSample | undefined>;
  /** Logical CPUs, for CPU percentages of the whole machine. */
  cpus: number;
  budget: OutputBudget;
  /** Hides credentials in the command line shown by the API. */
  mask: CredentialMask;
  /** Called on every state change (the global state counters). */
  onStateChange: (from: ProcessState, to: ProcessState) => void;
}

/**
 * Runs one encoder process and keeps it in the state its order asks for (SPEC §7.3): spawns it,
 * stops it (SIGINT, then SIGKILL after 5 s), maps its exit to a state, reconnects after a delay,
 * stops it when it is stale or over a limit (keeping the order, so that reconnect applies).
 * `tick()` must be called about once per second.
 */
export class Supervisor {
  private currentState: ProcessState = 'finished';
  private currentOrder: Order = 'stop';
  private stateSinceMs: number;
  private readonly counts: StateCounts = zeroStateCounts();
  private run: FfmpegRun | undefined;
  private lastProgress: ProgressValues = emptyProgress();
  private command: string[] = [];
  private exited: Promise<void> = Promise.resolve();
  private resolveExited: () => void = () => undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAtMs: number | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private lastProgressMs = 0;
  private stopReason: string | undefined;
  private respawnAfterExit = false;
  private disposed = false;
  private watch: ResourceWatch;
  private sampling = false;
  private vstats: VstatsChannel | undefined;

  constructor(
    private readonly settings: SupervisorSettings,
    /** Builds the next run; `vstatsPath` is where ffmpeg should write its per-frame statistics. */
    private readonly prepare: (vstatsPath: string | undefined) => PreparedRun,
    private readonly report: ProcessReport,
    private readonly deps: SupervisorDeps,
  ) {
    this.stateSinceMs = deps.now();
    this.watch = new ResourceWatch(settings.limits, deps.cpus);
  }

  get state(): ProcessState {
    return this.currentState;
  }

  get order(): Order {
    return this.currentOrder;
  }

  /** How many times this process entered each state. */
  get stateCounts(): Readonly<StateCounts> {
    return this.counts;
  }

  /** True while a child exists or a reconnect is pending: the process holds a slot of `max_processes`. */
  get occupiesSlot(): boolean {
    return isActive(this.currentState) || this.reconnectTimer !== undefined;
  }

  /** Sets the order without acting on it (a process restored from the db, started once the server listens). */
  setOrder(order: Order): void {
    this.currentOrder = order;
  }

  /** Continues the per-state counts of the supervisor this one replaces (update, reload). */
  adoptCounts(previous: Supervisor): void {
    Object.assign(this.counts, previous.stateCounts);
  }

  /** Gives the supervisor the FIFO its runs write `-vstats` into (closed by `dispose`). */
  attachVstats(channel: VstatsChannel): void {
    this.vstats = channel;
  }

  /** A line from the `-vstats` FIFO: it belongs to the current run. */
  onVstatsLine(line: string): void {
    this.run?.onVstatsLine(line);
  }

  /** Sets the order to start and spawns the child unless it runs already. */
  start(): void {
    this.currentOrder = 'start';
    if (this.disposed) return;
    if (isActive(this.currentState)) {
      // A stop is under way: start again as soon as the child is gone.
      if (this.currentState === 'finishing') this.respawnAfterExit = true;
      return;
    }
    this.cancelReconnect();
    this.spawn();
  }

  /** Sets the order to stop and stops the child; resolves when it has exited. */
  stop(): Promise<void> {
    this.currentOrder = 'stop';
    this.respawnAfterExit = false;
    this.cancelReconnect();
    return this.terminate('stop requested');
  }

  /** Stops the child if it runs and starts it again right away; the order becomes start. */
  async restart(): Promise<void> {
    this.currentOrder = 'start';
    this.cancelReconnect();
    if (isActive(this.currentState)) {
      this.respawnAfterExit = true;
      await this.terminate('restart requested');
    } else {
      this.spawn();
    }
  }

  /**
   * Stops the child without changing the order (stale, limits, shutdown). With the order start
   * and reconnect on, the process is started again after the reconnect delay.
   */
  terminate(reason: string): Promise<void> {
    const run = this.run;
    if (run === undefined || !isActive(this.currentState)) return Promise.resolve();
    if (this.currentState !== 'finishing') {
      this.stopReason = reason;
      this.setState('finishing');
      run.signal('SIGINT');
      run.refillBudget();
      this.killTimer = setTimeout(() => {
        this.note(`streamcore: no exit ${KILL_AFTER_MS / 1000} s after SIGINT, sending SIGKILL`);
        run.signal('SIGKILL');
        // A child stuck in the kernel may never report its exit; do not hang the caller on it.
        this.killTimer = setTimeout(() => this.resolveExited(), EXIT_AFTER_KILL_MS);
      }, KILL_AFTER_MS);
    }
    return this.exited;
  }

  /** Stops the child for good (process deleted or replaced, server shutting down); keeps the order. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.respawnAfterExit = false;
    this.cancelReconnect();
    await this.terminate('shutting down');
    await this.vstats?.close();
    this.vstats = undefined;
  }

  /** Seconds until a pending reconnect, or -1 when none is pending. */
  reconnectSeconds(nowMs: number): number {
    if (this.reconnectAtMs === undefined) return -1;
    return Math.max(0, Math.ceil((this.reconnectAtMs - nowMs) / 1000));
  }

  /** Seconds since the last state change. */
  stateSeconds(nowMs: number): number {
    return Math.max(0, (nowMs - this.stateSinceMs) / 1000);
  }

  /** The last command line, credentials masked. */
  get maskedCommand(): string[] {
    return this.command;
  }

  get pid(): number | undefined {
    return this.run?.pid;
  }

  /** CPU (percent of the machine) and resident memory (bytes) of the running child. */
  get resources(): { cpuPercent: number; rssBytes: number } {
    return isActive(this.currentState) ? this.watch.usage : { cpuPercent: 0, rssBytes: 0 };
  }

  /** Progress of the current run; the last values of a run that ended, with rates at 0. */
  progress(nowMs: number): ProgressValues {
    if (this.run !== undefined && isActive(this.currentState)) return this.run.tracker.values(nowMs);
    return this.lastProgress;
  }

  /** Bytes that output file `index` wrote through the server during the current run. */
  addOutputBytes(index: number, bytes: number): void {
    if (this.run === undefined || !isActive(this.currentState)) return;
    this.run.tracker.addOutputBytes(index, bytes);
    this.lastProgressMs = this.deps.now();
  }

  /** Bytes that input file `index` read from memfs through the server during the current run. */
  addInputBytes(index: number, bytes: number): void {
    if (this.run === undefined || !isActive(this.currentState)) return;
    this.run.tracker.addInputBytes(index, bytes);
  }

  /** Once per second: rates, CPU and memory, limits, stale timeout, output budget. */
  async tick(nowMs: number): Promise<void> {
    this.vstats?.tick();
    const run = this.run;
    if (run === undefined) return;
    // A stopping child keeps its output budget: it must be able to write its last lines to exit.
    if (this.currentState === 'finishing') run.refillBudget();
    if (this.currentState !== 'running') return;
    run.tick(nowMs);
    const timeout = this.settings.staleTimeoutMs;
    if (timeout > 0 && nowMs - this.lastProgressMs >= timeout) {
      this.note(`streamcore: no progress for ${timeout / 1000} s (stale_timeout_seconds), stopping`);
      void this.terminate('stale');
      return;
    }
    await this.sampleUsage(run, nowMs);
  }

  private async sampleUsage(run: FfmpegRun, nowMs: number): Promise<void> {
    const pid = run.pid;
    if (pid === undefined || this.sampling) return;
    this.sampling = true;
    try {
      const sample = await this.deps.readUsage(pid);
      if (sample === undefined || run !== this.run || this.currentState !== 'running') return;
      const exceeded = this.watch.update(sample, nowMs);
      if (exceeded !== undefined) {
        this.note(`streamcore: ${exceeded}, stopping`);
        void this.terminate('resource limit');
      }
    } finally {
      this.sampling = false;
    }
  }

  private spawn(): void {
    const now = this.deps.now();
    this.setState('starting');
    this.report.startRun(Math.floor(now / 1000));
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
    this.stopReason = undefined;
    this.watch = new ResourceWatch(this.settings.limits, this.deps.cpus);
    let prepared: PreparedRun;
    try {
      prepared = this.prepare(this.vstats?.path);
    } catch (error) {
      this.command = [];
      this.note(`streamcore: cannot start: ${(error as Error).message}`);
      this.finishRun('failed');
      return;
    }
    this.command = [this.settings.binary, ...prepared.args].map(this.deps.mask);
    const run = new FfmpegRun({
      binary: this.settings.binary,
      args: prepared.args,
      cwd: this.settings.cwd,
      labels: prepared.labels,
      report: this.report,
      budget: this.deps.budget,
      spawn: this.deps.spawn,
      now: this.deps.now,
      onSpawn: () => {
        if (this.run !== run) return;
        this.lastProgressMs = this.deps.now();
        // A stop that came while starting has moved the state on to finishing already.
        if (this.currentState === 'starting') this.setState('running');
      },
      onSpawnError: (error) => {
        if (this.run !== run) return;
        this.note(`streamcore: cannot start ${this.settings.binary}: ${error.message}`);
        this.finishRun('failed');
      },
      onExit: (code, signal) => {
        if (this.run !== run) return;
        if (this.stopReason !== undefined) this.note(`streamcore: stopped (${this.stopReason})`);
        const state: ProcessState =
          signal !== null ? 'killed' : code === 0 || code === 255 ? 'finished' : 'failed';
        if (signal === null && state === 'failed') {
          // ffmpeg's last line says why it failed ("File '…' already exists. Exiting."): the
          // note goes into the log without hiding it from last_logline.
          this.note(`streamcore: exited with code ${code}`, { keepLastLine: run.logLines > 0 });
        }
        this.finishRun(state);
      },
      onProgress: () => {
        if (this.run === run) this.lastProgressMs = this.deps.now();
      },
    });
    this.run = run;
    try {
      run.start();
    } catch (error) {
      this.note(`streamcore: cannot start ${this.settings.binary}: ${(error as Error).message}`);
      this.finishRun('failed');
    }
  }

  /** The child is gone (or never came): record the state, then respawn or reconnect as ordered. */
  private finishRun(state: ProcessState): void {
    const now = this.deps.now();
    clearTimeout(this.killTimer);
    this.killTimer = undefined;
    if (this.run !== undefined) {
      const last = this.run.tracker.values(now);
      this.lastProgress = { ...last, fps: 0, bitrate: 0, speed: 0 };
      for (const stream of [...last.inputs, ...last.outputs]) {
        stream.fps = 0;
        stream.pps = 0;
        stream.bitrate = 0;
      }
    }
    this.run = undefined;
    this.setState(state);
    this.report.endRun(Math.floor(now / 1000), state);
    this.resolveExited();
    if (this.disposed) return;
    if (this.respawnAfterExit) {
      this.respawnAfterExit = false;
      this.spawn();
    } else if (this.currentOrder === 'start' && this.settings.reconnect) {
      this.scheduleReconnect(now);
    }
  }

  private scheduleReconnect(nowMs: number): void {
    const delay = Math.max(this.settings.reconnectDelayMs, MIN_RECONNECT_MS);
    this.reconnectAtMs = nowMs + delay;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.reconnectAtMs = undefined;
      if (!this.disposed && this.currentOrder === 'start' && !isActive(this.currentState)) this.spawn();
    }, delay);
  }

  private cancelReconnect(): void {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.reconnectAtMs = undefined;
  }

  private setState(next: ProcessState): void {
    const previous = this.currentState;
    if (!canTransition(previous, next)) {
      // Never expected; logged rather than thrown so that one process's bug cannot stop the others.
      this.deps.logger.error({ from: previous, to: next }, 'unexpected process state transition');
    }
    this.currentState = next;
    this.stateSinceMs = this.deps.now();
    this.counts[next]++;
    this.deps.onStateChange(previous, next);
  }

  private note(line: string, options: { keepLastLine?: boolean } = {}): void {
    this.report.addLine(Math.floor(this.deps.now() / 1000), line, options);
  }
}
