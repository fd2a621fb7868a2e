import type { Logger } from 'pino';
import { canTransition, zeroStateCounts, type ProcessState, type StateCounts } from './states.js';

/**
 * The state of one process over time: the current state, since when, how many times it entered
 * each state, and the listener told of every change (the server-wide counters).
 */
export class StateRecord {
  private current: ProcessState = 'finished';
  private sinceMs: number;
  private readonly entered: StateCounts = zeroStateCounts();

  constructor(
    private readonly now: () => number,
    private readonly logger: Logger,
    private readonly onChange: (from: ProcessState, to: ProcessState) => void,
  ) {
    this.sinceMs = now();
  }

  get state(): ProcessState {
    return this.current;
  }

  /** How many times this process entered each state. */
  get counts(): Readonly<StateCounts> {
    return this.entered;
  }

  /** Seconds since the last state change. */
  seconds(nowMs: number): number {
    return Math.max(0, (nowMs - this.sinceMs) / 1000);
  }

  /** Continues the counts of the record this one replaces (update, reload). */
  adopt(previous: Readonly<StateCounts>): void {
    Object.assign(this.entered, previous);
  }

  enter(next: ProcessState): void {
    const previous = this.current;
    if (!canTransition(previous, next)) {
      // Never expected; logged rather than thrown so that one process's bug cannot stop the others.
      this.logger.error({ from: previous, to: next }, 'unexpected process state transition');
    }
    this.current = next;
    this.sinceMs = this.now();
    this.entered[next]++;
    this.onChange(previous, next);
  }
}
