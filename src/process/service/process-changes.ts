import {
  isObject,
  mergeUpdate,
  parseOutputReference,
  readProcessConfig,
  resolveConfig,
  validateProcessConfig,
  type PlaceholderValues,
  type ProcessConfig,
} from '../config/index.js';
import type { EventSink } from '../../events/index.js';
import { ApiError } from '../../http/index.js';
import {
  checkMetadataChange,
  metadataBytes,
  processOwner,
  type MetadataBudget,
} from '../../metadata/index.js';
import type { ProcessRecord, ProcessStoreBackend } from '../store/index.js';
import type { EntryFactory } from './entry-factory.js';
import { KeyedLocks } from './locks.js';
import type { ProcessEntry } from './process-entry.js';
import type { ProcessTable } from './process-table.js';
import { invalidConfig, maxDefinedError, maxProcessesError, readOrThrow } from './service-errors.js';

/** The commands of `PUT /api/v3/process/:id/command`. */
export const COMMANDS = ['start', 'stop', 'restart', 'reload'] as const;
export type Command = (typeof COMMANDS)[number];

/** Attempts of an update to hold the locks its merged config needs (see `update`). */
const MAX_LOCK_ATTEMPTS = 3;

export interface ProcessChangesDeps {
  table: ProcessTable;
  factory: EntryFactory;
  db: ProcessStoreBackend;
  /** `ffmpeg.max_processes` (running encoders); 0 = no limit. */
  maxProcesses: number;
  /** `api.limits.max_processes` (defined processes). */
  maxDefined: number;
  /** `api.limits.max_metadata_bytes`, shared with the server-wide metadata. */
  metadataBudget: MetadataBudget;
  /** The encoder access policy: why the encoder of `resolved` must not run (`written`: as given). */
  access: (resolved: ProcessConfig, written: ProcessConfig) => string[];
  /** The server-wide placeholder values as they are now. */
  placeholders: () => PlaceholderValues;
  /** Unix seconds. */
  nowSeconds: () => number;
  /** Processes were added, removed or replaced (the memfs prefixes follow). */
  changed: () => void;
  /** Deletes the `purge_on_delete` files of a process that goes away or is replaced. */
  purge: (entry: ProcessEntry) => Promise<void>;
  /** Told of each process created, updated or deleted once the change is saved. */
  events: EventSink;
}

/**
 * The changes of the process API (docs/processes.md#routes-and-answers): create, update, delete, commands and metadata.
 * Each runs under the locks of the processes it touches, so that operations on one process apply
 * one after the other while different processes never wait for each other. A config's
 * placeholders are resolved once per change; the resolved copy is validated, gives the locks of
 * the processes it reads from, and is handed to the new runtime.
 * Past 300 lines by `adopt` and `detach` (a cluster moving processes, docs/cluster.md): they take
 * the same per-process locks as the other changes, which a file of their own would have to share.
 */
export class ProcessChanges {
  private readonly locks = new KeyedLocks();
  /** Creations under way (checked against `maxDefined`, not in the table yet). */
  private creating = 0;

  constructor(private readonly deps: ProcessChangesDeps) {}

  async create(body: unknown): Promise<ProcessConfig> {
    const { table, db } = this.deps;
    const config = readOrThrow(body);
    const values = this.deps.placeholders();
    const resolved = resolveConfig(config, values);
    // The processes its inputs read from are held too: none of them is renamed or deleted
    // between the check of the references and the creation.
    return this.locks.run(lockKeys([config.id], resolved), async () => {
      this.validate(config, resolved);
      if (table.has(config.id)) throw invalidConfig([`id: a process with id "${config.id}" already exists`]);
      if (table.size + this.creating >= this.deps.maxDefined) throw maxDefinedError(this.deps.maxDefined);
      if (config.autostart) this.ensureSlot(config.id);
      const now = this.deps.nowSeconds();
      this.creating++;
      const entry = await this.deps.factory
        .create(config, resolved, { createdAt: now, updatedAt: now, metadata: {} })
        .finally(() => this.creating--);
      this.settle(entry, values);
      if (config.autostart) entry.supervisor.setOrder('start');
      const unrelease = db.release(config.id);
      table.set(entry);
      this.deps.changed();
      // Stored before it runs: no encoder starts for a process the file does not hold.
      await db.save({ ids: [config.id] }, () => {
        table.delete(config.id);
        unrelease();
        this.deps.changed();
        discard(entry);
      });
      this.announce('created', config);
      if (config.autostart) entry.supervisor.start();
      return config;
    });
  }

  /**
   * Merges `body` over the current config and replaces the process (docs/processes.md#routes-and-answers). The current
   * config is read, merged and validated under the process's lock, so that concurrent updates
   * apply one after the other and none is lost.
   */
  async update(id: string, body: unknown): Promise<ProcessConfig> {
    const { table } = this.deps;
    const current = table.require(id);
    if (!isObject(body))
      throw invalidConfig([
        body === undefined ? 'body: a JSON object is required' : 'body: must be a JSON object',
      ]);
    // The keys (new id, referenced processes) depend on the merged config: guessed from the
    // merge over the current one as written (a reference built from placeholders is missed by
    // the guess), checked again on the resolved config under the locks, and taken again when
    // they differ. The attempts are bounded; the last one goes on with the keys it holds.
    let keys = lockKeys([id], readProcessConfig(mergeUpdate(current.config, body)).config);
    for (let attempt = 1; ; attempt++) {
      const held = keys;
      const updated = await this.locks.run(held, async () => {
        const old = table.require(id);
        const config = readOrThrow(mergeUpdate(old.config, body));
        const values = this.deps.placeholders();
        const resolved = resolveConfig(config, values);
        keys = lockKeys([id], resolved);
        if (attempt < MAX_LOCK_ATTEMPTS && keys.some((key) => !held.includes(key))) return undefined;
        this.validate(config, resolved);
        if (config.id !== id && table.has(config.id)) {
          throw invalidConfig([`id: cannot rename "${id}" to "${config.id}", a process with that id exists`]);
        }
        await this.replace(old, config, resolved, values);
        return config;
      });
      if (updated !== undefined) return updated;
    }
  }

  /**
   * Forgets the process, then stops it and purges its `purge_on_delete` files once the file no
   * longer holds it (a delete that cannot be saved leaves the process running).
   */
  async remove(id: string): Promise<void> {
    const { table } = this.deps;
    await this.locks.run([id], async () => {
      const entry = table.require(id);
      const budget = this.deps.metadataBudget;
      const metadataBytes = budget.bytesOf(processOwner(id));
      table.delete(id);
      budget.record(processOwner(id), 0);
      this.deps.changed();
      await this.deps.db.save({ ids: [id] }, () => {
        table.set(entry);
        budget.record(processOwner(id), metadataBytes);
        this.deps.changed();
      });
      await entry.supervisor.dispose();
      await this.deps.purge(entry);
      this.announce('deleted', entry.config);
    });
  }

  async runCommand(id: string, command: Command): Promise<void> {
    await this.locks.run([id], async () => {
      const entry = this.deps.table.require(id);
      const supervisor = entry.supervisor;
      // The new order is stored first; the command acts once it is saved.
      const before = supervisor.order;
      const after = command === 'stop' ? 'stop' : command === 'reload' ? before : 'start';
      if (command !== 'stop' && command !== 'reload' && !supervisor.occupiesSlot) this.ensureSlot(id);
      supervisor.setOrder(after);
      await this.deps.db.save({ entries: [id] }, () => supervisor.setOrder(before));
      switch (command) {
        case 'start':
          supervisor.start();
          break;
        case 'stop':
          await supervisor.stop();
          break;
        case 'restart':
          await supervisor.restart();
          break;
        case 'reload':
          await this.reload(entry);
          break;
      }
    });
  }

  /** Sets one metadata key; `null` deletes it. Returns what is stored now. */
  async setMetadata(id: string, key: string, value: unknown): Promise<unknown> {
    return this.locks.run([id], async () => {
      const entry = this.deps.table.require(id);
      const metadata = entry.metadata;
      const { problems, bytes } = checkMetadataChange(metadata, key, value);
      if (problems.length > 0) throw new ApiError('BAD_REQUEST', problems, { message: 'Invalid metadata' });
      const budget = this.deps.metadataBudget;
      const owner = processOwner(id);
      budget.check(owner, bytes);
      const bytesBefore = budget.bytesOf(owner);
      const had = Object.hasOwn(metadata, key);
      const previous = metadata[key];
      if (value === null) delete metadata[key];
      else metadata[key] = value;
      entry.metadataRevision++;
      budget.record(owner, bytes);
      await this.deps.db.save({ metadataKey: { id, key } }, () => {
        if (had) metadata[key] = previous;
        else delete metadata[key];
        entry.metadataRevision++;
        budget.record(owner, bytesBefore);
      });
      return value;
    });
  }

  /**
   * Takes over a process kept elsewhere (a cluster moved it here): it joins the table as stored,
   * nothing is written, and it starts when its order says so. Replaces this node's copy, if any.
   */
  async adopt(record: ProcessRecord): Promise<void> {
    const id = record.config.id;
    await this.locks.run([id], async () => {
      const values = this.deps.placeholders();
      const resolved = resolveConfig(record.config, values);
      const entry = await this.deps.factory.create(record.config, resolved, {
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
        metadata: record.metadata,
      });
      this.settle(entry, values);
      entry.supervisor.setOrder(record.order);
      const old = this.deps.table.get(id);
      this.deps.table.set(entry);
      this.deps.metadataBudget.record(processOwner(id), metadataBytes(record.metadata));
      this.deps.changed();
      if (old !== undefined) await old.supervisor.dispose();
      if (record.order === 'start' && !this.deps.table.slotsFull(id, this.deps.maxProcesses))
        entry.supervisor.start();
    });
  }

  /**
   * Lets go of a process without touching the store (a cluster moved it away, or this node lost
   * its lease): its encoder is stopped before this resolves; its files stay.
   */
  async detach(id: string): Promise<void> {
    await this.locks.run([id], async () => {
      const entry = this.deps.table.get(id);
      if (entry === undefined) return;
      this.deps.table.delete(id);
      this.deps.metadataBudget.record(processOwner(id), 0);
      this.deps.changed();
      await entry.supervisor.dispose();
    });
  }

  /** A new runtime for the same config (the placeholder values have not changed since the start). */
  private async reload(entry: ProcessEntry): Promise<void> {
    const order = entry.supervisor.order;
    await entry.supervisor.dispose();
    const fresh = await this.deps.factory.create(entry.config, entry.resolved, entry);
    fresh.report.adopt(entry.report);
    fresh.supervisor.adoptCounts(entry.supervisor);
    this.deps.table.set(fresh);
    this.deps.changed();
    if (order === 'start') fresh.supervisor.start();
  }

  /** Replaces the runtime of `old` by one for `config` (update); the caller holds the locks. */
  private async replace(
    old: ProcessEntry,
    config: ProcessConfig,
    resolved: ProcessConfig,
    values: PlaceholderValues,
  ): Promise<void> {
    const { table, db } = this.deps;
    const order = old.supervisor.order;
    const entry = await this.deps.factory.create(config, resolved, {
      createdAt: old.createdAt,
      updatedAt: this.deps.nowSeconds(),
      metadata: old.metadata,
    });
    this.settle(entry, values);
    entry.supervisor.setOrder(order);
    table.delete(old.config.id);
    const unrelease = db.release(config.id);
    table.set(entry);
    // Its metadata goes with it to its new id.
    const budget = this.deps.metadataBudget;
    budget.move(processOwner(old.config.id), processOwner(config.id));
    this.deps.changed();
    // The old process keeps running until the new config is saved; an update that cannot be
    // saved leaves it as it was.
    await db.save({ ids: [old.config.id, config.id] }, () => {
      table.delete(config.id);
      budget.move(processOwner(config.id), processOwner(old.config.id));
      unrelease();
      table.set(old);
      this.deps.changed();
      discard(entry);
    });
    await old.supervisor.dispose();
    await this.deps.purge(old);
    entry.report.adopt(old.report);
    entry.supervisor.adoptCounts(old.supervisor);
    this.announce('updated', config, old.config.id);
    if (order === 'start') entry.supervisor.start();
  }

  /** `previous`: the id before an update renamed the process. */
  private announce(event: 'created' | 'updated' | 'deleted', config: ProcessConfig, previous?: string): void {
    const fields = { id: config.id, reference: config.reference };
    this.deps.events.publish(
      'process',
      event,
      previous !== undefined && previous !== config.id ? { ...fields, previous_id: previous } : fields,
    );
  }

  /**
   * A config as a create would take it, checked (the same 400s, the same access rules), but not
   * created: what the probe of a config (`POST /api/v3/process/probe`) opens, placeholders kept.
   */
  checked(body: unknown): ProcessConfig {
    const config = readOrThrow(body);
    this.validate(config, resolveConfig(config, this.deps.placeholders()));
    return config;
  }

  /** The semantic checks (docs/processes.md#process-config) against the current processes; throws a 400. */
  private validate(config: ProcessConfig, resolved: ProcessConfig): void {
    const problems = validateProcessConfig(config, resolved, {
      access: this.deps.access,
      lookup: (other) => this.deps.table.storedConfig(other),
      s3Names: Object.keys(this.deps.placeholders().s3 ?? {}),
    });
    if (problems.length > 0) throw invalidConfig(problems);
  }

  /**
   * The server finished starting while this change was under way (a request in the first moments
   * after the socket opened): the values `entry` was resolved with are outdated, and the service
   * resolved only the processes it already had again.
   */
  private settle(entry: ProcessEntry, resolvedWith: PlaceholderValues): void {
    const values = this.deps.placeholders();
    if (values !== resolvedWith) entry.resolved = resolveConfig(entry.config, values);
  }

  private ensureSlot(id: string): void {
    if (this.deps.table.slotsFull(id, this.deps.maxProcesses))
      throw maxProcessesError(this.deps.maxProcesses);
  }
}

/** Releases the runtime of an entry that never ran (its change was not saved). */
function discard(entry: ProcessEntry): void {
  entry.supervisor.dispose().catch(() => undefined);
}

/** `ids`, the id of `config` and the processes its inputs read from (`#<id>:output=…`), sorted. */
function lockKeys(ids: string[], config: ProcessConfig | undefined): string[] {
  if (config === undefined) return ids;
  const referenced = config.input.flatMap((input) => parseOutputReference(input.address)?.processId ?? []);
  return [...new Set([...ids, config.id, ...referenced])].sort();
}
