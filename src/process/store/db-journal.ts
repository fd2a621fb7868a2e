import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../../persistence/atomic-write.js';

/**
 * Below this size the whole db file is rewritten on every change (as cheap as an append); above
 * it a change is appended to the journal, so its cost no longer grows with the file, bytes.
 */
export const REWRITE_BELOW_BYTES = 4 * 1024 * 1024;

/**
 * What one change touched: processes by id (entry and metadata), single metadata keys of a
 * process (a metadata `PUT` costs its value, not the process's other keys), the server-wide
 * metadata.
 */
export interface DbChange {
  readonly ids?: readonly string[];
  /** Processes whose entry alone changed (an order), not their metadata. */
  readonly entries?: readonly string[];
  readonly metadataKey?: { readonly id: string; readonly key: string };
  readonly system?: boolean;
}

/** The processes and metadata keys one write carries. */
export interface ChangedParts {
  readonly ids: ReadonlySet<string>;
  readonly entries: ReadonlySet<string>;
  /** Keys by process id. */
  readonly metadataKeys: ReadonlyMap<string, ReadonlySet<string>>;
  readonly system: boolean;
}

/** How the store renders itself: the whole file, or one journal line for a change. */
export interface DbRendering {
  whole(): string;
  change(parts: ChangedParts): string;
}

interface Batch {
  done: Promise<void>;
  undos: (() => void)[];
  ids: Set<string>;
  entries: Set<string>;
  metadataKeys: Map<string, Set<string>>;
  system: boolean;
  /** Render the whole file (shutdown, start after a journal was replayed). */
  whole: boolean;
}

/**
 * Writes `db.json` and its journal `db.journal`, coalescing bursts: `save()` resolves once a write
 * that started after the call is durable (fsynced), so the caller's change is on disk.
 *
 * While the file is small every change rewrites it atomically (datarhei v16 reads it as is). Once
 * it passes `REWRITE_BELOW_BYTES`, a change appends one line to the journal (see journal-lines.ts)
 * and syncs it: its cost is that of the change, not of all processes. When the journal has grown
 * past the file, it is folded into a new file (atomic rewrite, then the journal is emptied), so
 * the rewrites' cost spreads over at least as many bytes of changes. A crash leaves either the old
 * file and the journal or the new file and a journal that repeats what it holds (lines are whole
 * states, replaying them again changes nothing); a line cut off by a crash was never acknowledged.
 *
 * All or nothing (issue 10 item 3): each change applied in memory hands `save` the step that
 * undoes it. When a write fails, the undo steps of every change it carried run, newest first,
 * before the next write renders, and each caller gets the error.
 */
export class DbJournal {
  private chain: Promise<void> = Promise.resolve();
  private pending: Batch | undefined;
  private handle: FileHandle | undefined;
  /** Bytes of the db file as last written whole. */
  private fileBytes = 0;
  /** Bytes of intact lines in the journal. */
  private journalBytes = 0;
  /** A failed append may have left part of a line that could not be cut off: rewrite whole next. */
  private damaged = false;

  constructor(
    private readonly file: string,
    private readonly journalFile: string,
    private readonly render: DbRendering,
    /** A fold of the journal into the file failed (the change itself was saved in the journal). */
    private readonly onFoldError: (error: unknown) => void,
  ) {}

  /** The sizes found at start (after the file and journal were read). */
  async measure(): Promise<{ journalBytes: number }> {
    this.fileBytes = (await stat(this.file).catch(() => undefined))?.size ?? 0;
    this.journalBytes = (await stat(this.journalFile).catch(() => undefined))?.size ?? 0;
    return { journalBytes: this.journalBytes };
  }

  /** Saves `change` (undefined: everything, as a whole rewrite). */
  save(change: DbChange | undefined, undo?: () => void): Promise<void> {
    if (this.pending === undefined) {
      const batch: Batch = {
        done: Promise.resolve(),
        undos: [],
        ids: new Set(),
        entries: new Set(),
        metadataKeys: new Map(),
        system: false,
        whole: false,
      };
      batch.done = this.chain.then(async () => {
        // Changes from now on belong to the next write.
        if (this.pending === batch) this.pending = undefined;
        try {
          await this.write(batch);
        } catch (error) {
          for (const step of batch.undos.reverse()) step();
          throw error;
        }
      });
      this.chain = batch.done.catch(() => undefined);
      this.pending = batch;
    }
    const batch = this.pending;
    if (change === undefined) batch.whole = true;
    else {
      for (const id of change.ids ?? []) batch.ids.add(id);
      for (const id of change.entries ?? []) batch.entries.add(id);
      if (change.metadataKey !== undefined) {
        const { id, key } = change.metadataKey;
        const keys = batch.metadataKeys.get(id) ?? new Set<string>();
        batch.metadataKeys.set(id, keys.add(key));
      }
      if (change.system === true) batch.system = true;
    }
    if (undo !== undefined) batch.undos.push(undo);
    return batch.done;
  }

  /** Closes the journal's handle (after the last save). */
  async close(): Promise<void> {
    await this.chain;
    await this.handle?.close();
    this.handle = undefined;
  }

  private async write(batch: Batch): Promise<void> {
    if (batch.whole || this.damaged || this.fileBytes + this.journalBytes < REWRITE_BELOW_BYTES) {
      await this.rewrite();
      return;
    }
    await this.append(this.render.change(batch));
    // Not part of the change: a failure leaves the journal, which is still complete.
    if (this.journalBytes > Math.max(this.fileBytes, REWRITE_BELOW_BYTES))
      await this.rewrite().catch(this.onFoldError);
  }

  /** The whole file atomically, then an empty journal. */
  private async rewrite(): Promise<void> {
    const text = this.render.whole();
    await writeFileAtomic(this.file, text);
    this.fileBytes = Buffer.byteLength(text);
    if (this.journalBytes > 0 || this.damaged) {
      const handle = await this.journal();
      await handle.truncate(0);
      await handle.datasync();
      this.journalBytes = 0;
      this.damaged = false;
    }
  }

  private async append(line: string): Promise<void> {
    const handle = await this.journal();
    const bytes = Buffer.from(`${line}\n`);
    try {
      await handle.write(bytes, 0, bytes.length, this.journalBytes);
      await handle.datasync();
    } catch (error) {
      // Cut off what part of the line may have been written, so the next line starts clean.
      await handle.truncate(this.journalBytes).catch(() => (this.damaged = true));
      throw error;
    }
    this.journalBytes += bytes.length;
  }

  private async journal(): Promise<FileHandle> {
    if (this.handle !== undefined) return this.handle;
    const handle = await open(this.journalFile, 'a+', 0o600);
    // The new name must survive a crash too.
    await syncDirectory(dirname(this.journalFile));
    this.handle = handle;
    return handle;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}
