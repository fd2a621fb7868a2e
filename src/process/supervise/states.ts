/** The six states of a process (docs/processes.md#states-orders-and-supervision), in the order metrics list them. */
export const STATES = ['finished', 'starting', 'running', 'finishing', 'failed', 'killed'] as const;
export type ProcessState = (typeof STATES)[number];

export type Order = 'start' | 'stop';

/** Allowed transitions; anything else is a bug in the supervisor. */
const TRANSITIONS: Record<ProcessState, readonly ProcessState[]> = {
  finished: ['starting'],
  starting: ['running', 'finishing', 'failed'],
  running: ['finished', 'finishing', 'failed', 'killed'],
  finishing: ['finished', 'failed', 'killed'],
  failed: ['starting'],
  killed: ['starting'],
};

export function canTransition(from: ProcessState, to: ProcessState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** How many times something entered each state. */
export type StateCounts = Record<ProcessState, number>;

export function zeroStateCounts(): StateCounts {
  return { finished: 0, starting: 0, running: 0, finishing: 0, failed: 0, killed: 0 };
}

/** True while a child process exists or is being created. */
export function isActive(state: ProcessState): boolean {
  return state === 'starting' || state === 'running' || state === 'finishing';
}

/**
 * The state a child's exit leaves the process in: killed by a signal, finished on code 0 or 255
 * (ffmpeg's exit after SIGINT), failed otherwise.
 */
export function exitState(code: number | null, signal: NodeJS.Signals | null): ProcessState {
  if (signal !== null) return 'killed';
  return code === 0 || code === 255 ? 'finished' : 'failed';
}
