/**
 * What a module does when the configuration is reloaded while the server runs
 * (docs/configuration.md#what-a-reload-applies). Two phases, so that a reload either takes effect
 * whole or not at all: every step affected prepares (builds beside what runs: a new listener is
 * opened, a directory is read), and only when all could, all commit; otherwise the prepared ones
 * are aborted and nothing running changed.
 */
export interface ReloadStep<C> {
  /** What the step is, for messages (`rtmp`, `router`). */
  readonly name: string;
  /** The dotted key paths this step puts into effect. */
  readonly keys: readonly string[];
  /**
   * Builds what `next` needs without touching what runs, or throws an `Error` whose message names
   * the key and the reason. `changed` holds the step's keys whose value differs.
   */
  prepare(next: C, changed: readonly string[]): Promise<PreparedReload> | PreparedReload;
}

export interface PreparedReload {
  /** Puts the prepared state into effect. Must not fail: whatever could fail did so in `prepare`. */
  commit(): void | Promise<void>;
  /** Drops what `prepare` built (another step could not prepare). */
  abort(): void | Promise<void>;
  /** Keys the step cannot apply while running after all (they wait for the next start), and why. */
  deferred?: readonly { key: string; why: string }[];
}

/** A prepared reload that changes nothing when committed or aborted. */
export const NOTHING_TO_BUILD: PreparedReload = { commit: () => undefined, abort: () => undefined };

/**
 * The step of keys whose readers look them up in the running config each time they use them (a
 * getter over its section, which the reload updates in place): nothing to build.
 */
export function readAtUse<C>(name: string, keys: readonly string[]): ReloadStep<C> {
  return { name, keys, prepare: () => NOTHING_TO_BUILD };
}
