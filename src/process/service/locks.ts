/**
 * Serialises operations per key (per process id): an update, a command and a delete of the same
 * process run one after the other, while other processes are not held up. Keys are taken in
 * sorted order, so two operations over overlapping keys cannot wait for each other.
 */
export class KeyedLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(keys: string[], operation: () => Promise<T>): Promise<T> {
    const releases: (() => void)[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) {
        const previous = this.tails.get(key) ?? Promise.resolve();
        let release: () => void = () => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        const tail = previous.then(() => held);
        this.tails.set(key, tail);
        releases.push(() => {
          release();
          if (this.tails.get(key) === tail) this.tails.delete(key);
        });
        await previous;
      }
      return await operation();
    } finally {
      for (const release of releases) release();
    }
  }
}
