import type { ReloadStep } from './reload.js';

/**
 * Start and stop steps of the modules, run by the app in a fixed order:
 * `onListen` steps after the server listens (in registration order; they get the base URL, which
 * e.g. `{memfs}` needs), `onShutdown` steps before the HTTP server closes (reverse order: encoders
 * stop while the memory filesystem still takes their last writes), `onFinal` after it closed
 * (reverse order: flush state that requests could still change until then).
 */
export type Step<T = void> = (arg: T) => void | Promise<void>;

/** `C` is the configuration's type: the app's `Config`. */
export class Lifecycle<C = unknown> {
  private readonly listenSteps: Step<string>[] = [];
  private readonly shutdownSteps: Step[] = [];
  private readonly finalSteps: Step[] = [];
  private readonly reloadSteps: ReloadStep<C>[] = [];

  onListen(step: Step<string>): void {
    this.listenSteps.push(step);
  }

  onShutdown(step: Step): void {
    this.shutdownSteps.push(step);
  }

  onFinal(step: Step): void {
    this.finalSteps.push(step);
  }

  /** A part that takes changes of its keys while running (reload.ts), prepared in registration order. */
  onReload(step: ReloadStep<C>): void {
    this.reloadSteps.push(step);
  }

  /** The registered reload steps, in registration order. */
  get reloadable(): readonly ReloadStep<C>[] {
    return this.reloadSteps;
  }

  async runListen(baseUrl: string): Promise<void> {
    for (const step of this.listenSteps) await step(baseUrl);
  }

  /** Runs every step even when one fails; returns the failures so the caller can log them. */
  async runShutdown(): Promise<unknown[]> {
    return runAll([...this.shutdownSteps].reverse());
  }

  async runFinal(): Promise<unknown[]> {
    return runAll([...this.finalSteps].reverse());
  }
}

async function runAll(steps: Step[]): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  return failures;
}
