import type { Logger } from 'pino';
import type { CredentialMask } from './credential-mask.js';
import type { ProcessUsageSample } from './proc-usage.js';
import type { IoLabels } from '../progress/index.js';
import type { ResourceLimits } from './resource-watch.js';
import type { Schedule } from './schedule.js';
import type { OutputBudget, RunPipe } from './run.js';
import type { SpawnFn } from './spawn.js';
import type { ProcessState } from './states.js';

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

/** What a run needs, made fresh for every start (references to other processes may have changed). */
export interface PreparedRun {
  args: string[];
  labels: IoLabels;
  /** Ends what the run was given for its lifetime only (its memfs grant); called once it has exited. */
  release?: () => void;
  /** Pipes the server writes into once the child runs (an input's relay, docs/processes.md#fallback-sources). */
  pipes?: readonly RunPipe[];
}

export interface SupervisorDeps {
  spawn: SpawnFn;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  /** The supervisor's own timers (reconnect delay, SIGKILL after SIGINT), on the clock of `now`. */
  schedule: Schedule;
  logger: Logger;
  readUsage: (pid: number) => ProcessUsageSample | undefined;
  /** Logical CPUs, for CPU percentages of the whole machine. */
  cpus: number;
  budget: OutputBudget;
  /** Hides credentials in the command line shown by the API. */
  mask: CredentialMask;
  /** Called on every state change (the global state counters). */
  onStateChange: (from: ProcessState, to: ProcessState) => void;
}
