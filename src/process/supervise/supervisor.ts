import { atRest, emptyProgress, type ProgressValues, type VstatsChannel } from '../progress/index.js';
import { ExitWait, KILL_AFTER_MS } from './exit-wait.js';
import { ReconnectTimer } from './reconnect-timer.js';
import type { ProcessReport } from './report.js';
import { FfmpegRun } from './run.js';
import type { PreparedRun, SupervisorDeps, SupervisorSettings } from './supervisor-settings.js';
import { exitState, isActive, type Order, type ProcessState, type StateCounts } from './states.js';
import { StateRecord } from './state-record.js';
import { UsageSampler } from './usage-sampler.js';

export type { PreparedRun, SupervisorDeps, SupervisorSettings } from './supervisor-settings.js';

/**
 * Runs one encoder process and keeps it in the state its order asks for (docs/processes.md#states-orders-and-supervision): spawns it,
 * stops it (SIGINT, then SIGKILL after 5 s), maps its exit to a state, reconnects after a delay,
 * stops it when it is stale or over a limit (keeping the order, so that reconnect applies).
 * `tick()` must be called about once per second.
 * Just past 300 lines on purpose: spawn, stop, exit and reconnect all act on the one current run
 * and state record, so they stay together; what stands alone is in its own module already (state
 * record, exit wait, reconnect timer, usage sampler, settings).
 */
export class Supervisor {
  private readonly record: StateRecord;
  private currentOrder: Order = 'stop';
  private run: FfmpegRun | undefined;
  private lastProgress: ProgressValues = emptyProgress();
  private command: string[] = [];
  private readonly exit: ExitWait;
  private readonly reconnect: ReconnectTimer;
  private lastProgressMs = 0;
  private stopReason: string | undefined;
  private respawnAfterExit = false;
  private disposed = false;
  /** Ends what the current run was given for its lifetime (`PreparedRun.release`). */
  private releaseRun: (() => void) | undefined;
  private readonly usage: UsageSampler;
  private vstats: VstatsChannel | undefined;

  constructor(
    private readonly settings: SupervisorSettings,
    /** Builds the next run; `vstatsPath` is where ffmpeg should write its per-frame statistics. */
    private readonly prepare: (vstatsPath: string | undefined) => PreparedRun,
    private readonly report: ProcessReport,
    private readonly deps: SupervisorDeps,
  ) {
    this.record = new StateRecord(deps.now, deps.logger, deps.onStateChange);
    this.exit = new ExitWait(deps.schedule);
    this.reconnect = new ReconnectTimer(deps.schedule);
    this.usage = new UsageSampler(settings.limits, deps.cpus, deps.readUsage);
  }

  get state(): ProcessState {
    return this.record.state;
  }

  get order(): Order {
    return this.currentOrder;
  }

  /** How many times this process entered each state. */
  get stateCounts(): Readonly<StateCounts> {
    return this.record.counts;
  }

  /** True while a child exists or a reconnect is pending: the process holds a slot of `max_processes`. */
  get occupiesSlot(): boolean {
    return isActive(this.record.state) || this.reconnect.pending;
  }

  /** Sets the order without acting on it (a process restored from the db, started once the server listens). */
  setOrder(order: Order): void {
    this.currentOrder = order;
  }

  /** Continues the per-state counts of the supervisor this one replaces (update, reload). */
  adoptCounts(previous: Supervisor): void {
    this.record.adopt(previous.stateCounts);
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
    if (isActive(this.record.state)) {
      // A stop is under way: start again as soon as the child is gone.
      if (this.record.state === 'finishing') this.respawnAfterExit = true;
      return;
    }
    this.reconnect.cancel();
    this.spawn();
  }

  /** Sets the order to stop and stops the child; resolves when it has exited. */
  stop(): Promise<void> {
    this.currentOrder = 'stop';
    this.respawnAfterExit = false;
    this.reconnect.cancel();
    return this.terminate('stop requested');
  }

  /** Stops the child if it runs and starts it again right away; the order becomes start. */
  async restart(): Promise<void> {
    this.currentOrder = 'start';
    this.reconnect.cancel();
    if (isActive(this.record.state)) {
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
    if (run === undefined || !isActive(this.record.state)) return Promise.resolve();
    if (this.record.state !== 'finishing') {
      this.stopReason = reason;
      this.record.enter('finishing');
      run.signal('SIGINT');
      run.refillBudget();
      this.exit.escalate(() => {
        this.note(`streamcore: no exit ${KILL_AFTER_MS / 1000} s after SIGINT, sending SIGKILL`);
        run.signal('SIGKILL');
      });
    }
    return this.exit.done;
  }

  /** Stops the child for good (process deleted or replaced, server shutting down); keeps the order. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.respawnAfterExit = false;
    this.reconnect.cancel();
    await this.terminate('shutting down');
    await this.vstats?.close();
    this.vstats = undefined;
  }

  /** Seconds until a pending reconnect, or -1 when none is pending. */
  reconnectSeconds(nowMs: number): number {
    return this.reconnect.secondsLeft(nowMs);
  }

  /** Seconds since the last state change. */
  stateSeconds(nowMs: number): number {
    return this.record.seconds(nowMs);
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
    return isActive(this.record.state) ? this.usage.usage : { cpuPercent: 0, rssBytes: 0 };
  }

  /** Progress of the current run; the last values of a run that ended, with rates at 0. */
  progress(nowMs: number): ProgressValues {
    if (this.run !== undefined && isActive(this.record.state)) return this.run.tracker.values(nowMs);
    return this.lastProgress;
  }

  /** Bytes that output file `index` wrote through the server during the current run. */
  addOutputBytes(index: number, bytes: number): void {
    if (this.run === undefined || !isActive(this.record.state)) return;
    this.run.tracker.addOutputBytes(index, bytes);
    this.lastProgressMs = this.deps.now();
  }

  /** Bytes that input file `index` read from memfs through the server during the current run. */
  addInputBytes(index: number, bytes: number): void {
    if (this.run === undefined || !isActive(this.record.state)) return;
    this.run.tracker.addInputBytes(index, bytes);
  }

  /** Once per second: rates, CPU and memory, limits, stale timeout, output budget. */
  tick(nowMs: number): void {
    this.vstats?.tick();
    const run = this.run;
    if (run === undefined) return;
    // A stopping child keeps its output budget: it must be able to write its last lines to exit.
    if (this.record.state === 'finishing') run.refillBudget();
    if (this.record.state !== 'running') return;
    run.tick(nowMs);
    const timeout = this.settings.staleTimeoutMs;
    if (timeout > 0 && nowMs - this.lastProgressMs >= timeout) {
      this.note(`streamcore: no progress for ${timeout / 1000} s (stale_timeout_seconds), stopping`);
      void this.terminate('stale');
      return;
    }
    this.sampleUsage(run, nowMs);
  }

  private sampleUsage(run: FfmpegRun, nowMs: number): void {
    const pid = run.pid;
    if (pid === undefined) return;
    const exceeded = this.usage.sample(pid, nowMs);
    if (exceeded !== undefined) {
      this.note(`streamcore: ${exceeded}, stopping`);
      void this.terminate('resource limit');
    }
  }

  private spawn(): void {
    const now = this.deps.now();
    this.record.enter('starting');
    this.report.startRun(Math.floor(now / 1000));
    this.exit.begin();
    this.stopReason = undefined;
    this.usage.reset();
    let prepared: PreparedRun;
    try {
      prepared = this.prepare(this.vstats?.path);
    } catch (error) {
      this.command = [];
      this.note(`streamcore: cannot start: ${(error as Error).message}`);
      this.finishRun('failed');
      return;
    }
    this.releaseRun = prepared.release;
    this.command = [this.settings.binary, ...prepared.args].map(this.deps.mask);
    const run = new FfmpegRun({
      binary: this.settings.binary,
      args: prepared.args,
      pipes: prepared.pipes,
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
        if (this.record.state === 'starting') this.record.enter('running');
      },
      onSpawnError: (error) => {
        if (this.run !== run) return;
        this.note(`streamcore: cannot start ${this.settings.binary}: ${error.message}`);
        this.finishRun('failed');
      },
      onExit: (code, signal) => {
        if (this.run !== run) return;
        if (this.stopReason !== undefined) this.note(`streamcore: stopped (${this.stopReason})`);
        const state = exitState(code, signal);
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
    if (this.run !== undefined) this.lastProgress = atRest(this.run.tracker.values(now));
    this.run = undefined;
    this.releaseRun?.();
    this.releaseRun = undefined;
    this.record.enter(state);
    this.report.endRun(Math.floor(now / 1000), state);
    this.exit.end();
    if (this.disposed) return;
    if (this.respawnAfterExit) {
      this.respawnAfterExit = false;
      this.spawn();
    } else if (this.currentOrder === 'start' && this.settings.reconnect) {
      this.reconnect.schedule(now, this.settings.reconnectDelayMs, () => {
        if (!this.disposed && this.currentOrder === 'start' && !isActive(this.record.state)) this.spawn();
      });
    }
  }

  private note(line: string, options: { keepLastLine?: boolean } = {}): void {
    this.report.addLine(Math.floor(this.deps.now() / 1000), line, options);
  }
}
