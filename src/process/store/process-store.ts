import { join } from 'node:path';
import type { Logger } from 'pino';
import { readFile } from 'node:fs/promises';
import { loadDb, serializeDb, type ProcessRecord, type StoredProcess, type VerbatimEntry } from './db.js';
import { storeEntry } from './stored-form.js';
import { DbJournal, type ChangedParts, type DbChange } from './db-journal.js';
import type { JournalLine } from './journal-lines.js';
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
/** The processes as the store writes them: all of them, or one by id (undefined: deleted). */
export interface ProcessRecords {
  all(): ProcessRecord[];
  one(id: string): ProcessRecord | undefined;
}

export class ProcessStore {
  private readonly file: string;
  private readonly journalFile: string;
  private readonly writer: DbJournal;
  /** The journal held lines at start: the first save folds them into the file. */
  private journalFound = false;
  private system: Record<string, unknown> = {};
  /** Entries the server cannot use, by their key in the file. */
  private readonly kept = new Map<string, VerbatimEntry>();

  constructor(
    dbDir: string,
    private readonly logger: Logger,
    records: ProcessRecords,
  ) {
    this.file = join(dbDir, 'db.json');
    this.journalFile = join(dbDir, 'db.journal');
    this.writer = new DbJournal(
      this.file,
      this.journalFile,
      {
        whole: () => serializeDb(records.all(), this.system, [...this.kept.values()]),
        change: (parts) =>
          JSON.stringify(journalLine(parts, parts.system ? this.system : undefined, records)),
      },
      (error) =>
        this.logger.error(
          { err: error, file: this.file },
          'folding db.journal into db.json failed; the journal keeps the changes',
        ),
    );
  }

  /**
   * Reads the file (absent: empty; unreadable: throws) and validates each process with
   * `validate`, which may look up the other stored configs (input references).
   */
  async load(
    validate: (config: ProcessConfig, lookup: (id: string) => ProcessConfig | undefined) => string[],
  ): Promise<LoadedProcess[]> {
    const journal = await readFile(this.journalFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    this.journalFound = journal !== '';
    const content = await loadDb(this.file, journal);
    await this.writer.measure();
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
  async save(change?: DbChange, undo?: () => void): Promise<void> {
    try {
      await this.writer.save(change, undo);
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
    await this.save({ system: true }, () => (this.system = previous));
  }

  /**
   * After the loaded processes are in memory: a journal found at start (or a db.json of datarhei
   * v16 beside one) is folded into a new db.json, so the file on disk is whole again.
   */
  async settle(): Promise<void> {
    if (!this.journalFound) return;
    await this.save();
    this.journalFound = false;
  }

  /** Waits for the last write and closes the journal. */
  close(): Promise<void> {
    return this.writer.close();
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

/** The journal line of a change (with the server-wide metadata when given). */
function journalLine(
  parts: ChangedParts,
  system: Record<string, unknown> | undefined,
  records: ProcessRecords,
): JournalLine {
  const line: JournalLine = { process: {}, metadata: {}, keys: {} };
  for (const [id, keys] of parts.metadataKeys) {
    const metadata = records.one(id)?.metadata;
    if (metadata === undefined) continue;
    const values: Record<string, unknown> = {};
    for (const key of keys) defineOwn(values, key, Object.hasOwn(metadata, key) ? metadata[key] : null);
    defineOwn(line.keys!, id, values);
  }
  for (const id of parts.entries) {
    const record = records.one(id);
    if (record !== undefined && !parts.ids.has(id)) defineOwn(line.process!, id, storeEntry(record));
  }
  for (const id of parts.ids) {
    const record = records.one(id);
    defineOwn(line.process!, id, record === undefined ? null : storeEntry(record));
    const metadata = record !== undefined && Object.keys(record.metadata).length > 0 ? record.metadata : null;
    defineOwn(line.metadata!, id, metadata);
  }
  if (system !== undefined) line.system = system;
  return line;
}

/** Sets `key` as an own property (an id such as `__proto__` must not reach the prototype). */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
