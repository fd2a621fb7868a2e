import { fork, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { SnapshotMessage } from '../monitor/index.js';
import { WORKER_ENV, type FromWorker, type ToWorker } from './messages.js';

/** How a worker process is started: the server's own entry, run with the worker variable set. */
export interface WorkerEntry {
  /** The entry module (src/main.ts under tsx, dist/main.js when built). */
  modulePath: string;
  /** Node's options for it (`--import tsx` from source). */
  execArgv: readonly string[];
}

export interface WorkerPoolDeps {
  count: number;
  entry: WorkerEntry;
  logger: Logger;
  /** The running config (a reload updates it in place before `configChanged`). */
  config: Config;
  /** The listening server whose socket the workers share; connections they hand back are its. */
  http: Server;
  /** The retained metrics snapshots, oldest first, for a worker that starts now. */
  backlog: () => SnapshotMessage[];
  /** Counts the requests a worker answered as `http` sessions (the main process's collector). */
  countRequests: (counted: [string, string, number, number][]) => void;
  /** Extra messages a worker that starts now needs (the throttle's keys, the encoders). */
  greeting: () => ToWorker[];
}

/** A worker must have applied a config within this long, ms, or it is restarted. */
const APPLY_TIMEOUT_MS = 30_000;
/** First wait before a worker that exited is started again, ms; doubled per quick exit, capped. */
const RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that lived this long, ms, restarts without delay the next time. */
const STABLE_AFTER_MS = 60_000;

interface Worker {
  child: ChildProcess;
  startedAt: number;
  /** Config generation it applied. */
  applied: number;
  /** Receives snapshots and other broadcasts (set once it applied its first config). */
  live: boolean;
}

/**
 * The API workers of the main process (docs/performance.md#the-api-on-every-core): forks them,
 * brings each one the running config, the metrics backlog and the listening socket, takes back the
 * connections they hand over, restarts one that exits, and stops them all on shutdown. Everything
 * travels on the fork's IPC channel.
 */
export class WorkerPool {
  private readonly workers = new Set<Worker>();
  private generation = 1;
  private readonly appliedWaiters = new Set<() => void>();
  private closing = false;
  private restartDelayMs = RESTART_DELAY_MS;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private readonly starting = new Set<Promise<void>>();

  constructor(private readonly deps: WorkerPoolDeps) {}

  /** Starts the workers and resolves once each one accepts connections (or failed to start). */
  start(): Promise<void> {
    for (let i = 0; i < this.deps.count; i++) this.launch();
    return this.ready;
  }

  /** Settles once every worker started so far (restarted ones too) accepts connections or failed to start. */
  get ready(): Promise<void> {
    return Promise.all(this.starting).then(() => undefined);
  }

  /** The process ids of the running workers (tests, the benchmark). */
  pids(): number[] {
    return [...this.workers].flatMap((worker) => (worker.child.pid === undefined ? [] : [worker.child.pid]));
  }

  /** Sends `message` to every worker that runs (snapshots, throttle keys, encoders). */
  broadcast(message: ToWorker): void {
    for (const worker of this.workers) if (worker.live) this.send(worker, message);
  }

  /**
   * Brings the running config to every worker and resolves once each one answers under it; a
   * worker that does not within the time-out is restarted (and starts under the new config).
   */
  async configChanged(): Promise<void> {
    const generation = ++this.generation;
    const waiting = [...this.workers].filter((worker) => worker.live);
    for (const worker of waiting) this.send(worker, { type: 'config', config: this.deps.config, generation });
    await Promise.all(waiting.map((worker) => this.applied(worker, generation)));
  }

  /** Workers accept from the listener again after it moved (a reload of `address`). */
  listenerMoved(): void {
    for (const worker of this.workers) if (worker.live) worker.child.send({ type: 'listen' }, this.deps.http);
  }

  /** Stops the workers: they close their copy of the listener, finish their answers, and exit. */
  async close(): Promise<void> {
    this.closing = true;
    for (const timer of this.restartTimers) clearTimeout(timer);
    await Promise.all(
      [...this.workers].map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  private launch(): void {
    const started: Promise<void> = this.startOne().finally(() => this.starting.delete(started));
    this.starting.add(started);
  }

  private async startOne(): Promise<void> {
    const { entry } = this.deps;
    const child = fork(entry.modulePath, [], {
      execArgv: [...entry.execArgv],
      env: { ...process.env, [WORKER_ENV]: '1' },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const worker: Worker = { child, startedAt: Date.now(), applied: 0, live: false };
    this.workers.add(worker);
    child.on('message', (message: FromWorker, handle: unknown) => this.received(worker, message, handle));
    child.on('error', (error) => this.deps.logger.warn({ err: error }, 'API worker: IPC failed'));
    child.once('exit', (code, signal) => this.exited(worker, code, signal));
    const generation = this.generation;
    this.send(worker, { type: 'config', config: this.deps.config, generation });
    if (!(await this.applied(worker, generation))) return;
    // From here on the worker gets every snapshot: the backlog first, in the same turn.
    for (const snapshot of this.deps.backlog()) this.send(worker, { type: 'snapshot', snapshot });
    for (const message of this.deps.greeting()) this.send(worker, message);
    worker.live = true;
    child.send({ type: 'listen' }, this.deps.http);
  }

  /** Resolves true once `worker` applied `generation`, false when it exited or timed out (then it is killed). */
  private applied(worker: Worker, generation: number): Promise<boolean> {
    return new Promise((resolve) => {
      const check = (): void => {
        const exited = worker.child.exitCode !== null || worker.child.signalCode !== null;
        if (worker.applied < generation && !exited) return;
        this.appliedWaiters.delete(check);
        clearTimeout(timer);
        resolve(!exited);
      };
      const timer = setTimeout(() => {
        this.appliedWaiters.delete(check);
        this.deps.logger.warn(
          { pid: worker.child.pid },
          'API worker: no answer to a config change; restarting it',
        );
        worker.child.kill('SIGKILL');
        resolve(false);
      }, APPLY_TIMEOUT_MS);
      this.appliedWaiters.add(check);
      check();
    });
  }

  private received(worker: Worker, message: FromWorker, handle: unknown): void {
    if (message.type === 'applied') {
      worker.applied = Math.max(worker.applied, message.generation);
      for (const check of [...this.appliedWaiters]) check();
      return;
    }
    if (message.type === 'requests') {
      this.deps.countRequests(message.counted);
      return;
    }
    if (message.type === 'hand-off' && handle !== undefined && handle !== null) {
      const socket = handle as Socket;
      const bytes = message.bytes;
      // Read first, before the HTTP server's own reading takes over the descriptor.
      if (bytes.length > 0) socket.unshift(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
      this.deps.http.emit('connection', socket);
    }
  }

  private exited(worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    this.workers.delete(worker);
    for (const check of [...this.appliedWaiters]) check();
    if (this.closing) return;
    this.deps.logger.warn({ pid: worker.child.pid, code, signal }, 'API worker exited; starting another');
    this.restartDelayMs =
      Date.now() - worker.startedAt >= STABLE_AFTER_MS
        ? RESTART_DELAY_MS
        : Math.min(this.restartDelayMs * 2, MAX_RESTART_DELAY_MS);
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (!this.closing) this.launch();
    }, this.restartDelayMs);
    this.restartTimers.add(timer);
  }

  private send(worker: Worker, message: ToWorker): void {
    if (worker.child.connected) worker.child.send(message);
  }
}
