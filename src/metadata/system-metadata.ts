import { ApiError } from '../http/index.js';
import { SYSTEM_OWNER, type MetadataBudget } from './budget.js';
import { checkSet } from './limits.js';

/** Where the server-wide metadata lives (the db file, beside the processes). */
export interface MetadataStore {
  /** What is stored now. */
  read(): Record<string, unknown>;
  /** Replaces it and resolves once it is on disk; on failure what is stored is unchanged. */
  replace(next: Record<string, unknown>): Promise<void>;
  /** The bound on all metadata together, the processes' included. */
  readonly budget: MetadataBudget;
}

/**
 * Server-wide JSON key/value (`/api/v3/metadata`). A change is checked against the bounds and
 * persisted before anyone reads it; changes run one at a time so none is lost between two.
 */
export class SystemMetadata {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: MetadataStore) {}

  all(): Record<string, unknown> {
    return this.store.read();
  }

  /** The value of `key`; 404 when there is none. */
  get(key: string): unknown {
    const current = this.store.read();
    if (!Object.hasOwn(current, key)) {
      throw new ApiError('NOT_FOUND', `no metadata under "${key}"`, { message: 'Metadata not found' });
    }
    return current[key];
  }

  /** Sets `key` (`null` deletes it); 400 naming the bound it would break. Resolves with the value. */
  set(key: string, value: unknown): Promise<unknown> {
    const run = this.queue.then(async () => {
      const current = this.store.read();
      const { problems, bytes } = checkSet(current, key, value);
      if (problems.length > 0) throw new ApiError('BAD_REQUEST', problems, { message: 'Invalid metadata' });
      const budget = this.store.budget;
      budget.check(SYSTEM_OWNER, bytes);
      const next = { ...current };
      if (value === null) delete next[key];
      else next[key] = value;
      await this.store.replace(next);
      budget.record(SYSTEM_OWNER, bytes);
      return value;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
