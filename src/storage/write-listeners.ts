import type { WriteListener } from './filesystem.js';

/** The subscribers of one filesystem's writes. A failing listener never fails the write. */
export class WriteListeners {
  private readonly listeners = new Set<WriteListener>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  add(listener: WriteListener): () => void {
    // Wrap so that subscribing the same function twice yields two independent subscriptions.
    const entry: WriteListener = (path, bytes) => listener(path, bytes);
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  notify(path: string, bytes: number): void {
    for (const listener of this.listeners) {
      try {
        listener(path, bytes);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
