import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  DbWriter,
  loadDb,
  serializeDb,
  type ProcessRecord,
  type StoredProcess,
  type VerbatimEntry,
} from './db.js';
import { readProcessConfig, type ProcessConfig } from '../config/index.js';
import { saveError } from './save-error.js';

/** A stored process that reads and validates, ready to be given a runtime. */
export interface LoadedProcess {
  config: ProcessConfig;
  stored: StoredProcess;
}

/**
 * The service's `<db.dir>/db.json`: loads the stored processes, keeps what it cannot use (an
 * entry that does not read or no longer validates is logged and written back exactly as it was
 * found, metadata included, never dropped), keeps the server-wide metadata, and writes the
 * current records after every change.
 */
export class ProcessStore {
  private readonly file: string;
  private readonly writer: DbWriter;
  private system: Record<string, unknown> = {};
  /** Entries the server cannot use, by their key in the file. */
  private readonly kept = new Map<string, VerbatimEntry>();

  constructor(
    dbDir: string,
    private readonly logger: Logger,
    records: () => ProcessRecord[],
  ) {
    this.file = join(dbDir, 'db.json');
    this.writer = new DbWriter(this.file, () => serializeDb(records(), this.system, [...this.kept.values()]));
  }

  /**
   * Reads the file (absent: empty; unreadable: throws) and validates each process with
   * `validate`, which may look up the other stored configs (input references).
   */
  async load(
    validate: (config: ProcessConfig, lookup: (id: string) => ProcessConfig | undefined) => string[],
  ): Promise<LoadedProcess[]> {
    const content = await loadDb(this.file);
    this.system = content.system;
    for (const entry of content.unreadable) {
      this.logger.error(
        { process: entry.key },
        'stored process is not an object; kept in db.json but not loaded',
      );
      this.kept.set(entry.key, entry);
    }
    const configs = new Map<string, { config: ProcessConfig; stored: StoredProcess }>();
    for (const stored of content.processes) {
      const { config, problems } = readProcessConfig(stored.body);
      if (config === undefined) this.keep(stored, problems);
      else if (configs.has(config.id)) this.keep(stored, [`id: another entry has the id "${config.id}"`]);
      else configs.set(config.id, { config, stored });
    }
    const loaded: LoadedProcess[] = [];
    for (const candidate of configs.values()) {
      const problems = validate(candidate.config, (id) => configs.get(id)?.config);
      if (problems.length > 0) this.keep(candidate.stored, problems);
      else loaded.push(candidate);
    }
    return loaded;
  }

  /**
   * Writes the current state; resolves once it is on disk. `undo` reverts the caller's change in
   * memory: it runs when the write fails (see `DbWriter`), and the caller gets a 500/507 that says
   * the change was not applied.
   */
  async save(undo?: () => void): Promise<void> {
    try {
      await this.writer.save(undo);
    } catch (error) {
      this.logger.error({ err: error, file: this.file }, 'db write failed; the change was undone');
      throw saveError(error, this.file);
    }
  }

  /** The server-wide metadata (`metadata.system` of the file). */
  systemMetadata(): Record<string, unknown> {
    return this.system;
  }

  /** Replaces the server-wide metadata once it is on disk; a failed write leaves it as it was. */
  async replaceSystemMetadata(next: Record<string, unknown>): Promise<void> {
    const previous = this.system;
    this.system = next;
    await this.save(() => (this.system = previous));
  }

  /**
   * A process with this id now exists (created, or renamed to it): the kept entry of that id is
   * replaced for good, metadata included, rather than coming back when the new process is deleted.
   */
  release(id: string): () => void {
    const released = [...this.kept].filter(([key, entry]) => key === id || entry.metadataKey === id);
    for (const [key] of released) this.kept.delete(key);
    // Undoes the release, for a change that could not be saved.
    return () => released.forEach(([key, entry]) => this.kept.set(key, entry));
  }

  private keep(stored: StoredProcess, problems: string[]): void {
    this.logger.error(
      { process: stored.id, problems },
      'stored process is invalid; kept in db.json but not loaded',
    );
    this.kept.set(stored.verbatim.key, stored.verbatim);
  }
}
