import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import { ApiError } from '../../http/index.js';
import type { Filesystem } from '../../storage/filesystem.js';
import {
  parseOutputReference,
  type InputRef,
  memfsPrefixes,
  OutputPrefixIndex,
  type OutputPrefix,
  memfsUrl,
  resolveConfig,
  type PlaceholderTemplate,
  type PlaceholderValues,
  configToPlain,
  isObject,
  mergeOver,
  readProcessConfig,
  type ProcessConfig,
  validateProcessConfig,
} from '../config/index.js';
import { applyCleanup, compileRule, purgeFiles, type CompiledRule } from './cleanup.js';
import {
  createCredentialMask,
  memfsSecrets,
  type CredentialMask,
  probeEncoder,
  type EncoderInfo,
  type SpawnFn,
  zeroStateCounts,
  type StateCounts,
} from '../supervise/index.js';
import { EncoderAccess } from './encoder-access.js';
import { EntryFactory } from './entry-factory.js';
import { InputReadMeter } from './input-read-meter.js';
import { KeyedLocks } from './locks.js';
import type { ProcessEntry } from './process-entry.js';
import { ProcessStore } from '../store/index.js';

export interface ProcessServiceDeps {
  config: Config;
  logger: Logger;
  spawn: SpawnFn;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  /** Root of the proc filesystem, for CPU and memory of the children. */
  procRoot: string;
  /** Logical CPUs of the machine. */
  cpus: number;
  filesystems: { disk: Filesystem & { readonly root: string }; mem: Filesystem };
  /** Placeholders with parameters from other modules (`{rtmp,name=…}` from the ingest servers). */
  templates?: Readonly<Record<string, PlaceholderTemplate>>;
  /** Secrets besides the memfs password that must not show in reports (`rtmp.token`). */
  secrets?: readonly string[];
  /** The config file, which encoders must never read (it holds the JWT secret and passwords). */
  configFile?: string;
}

/** The commands of `PUT /api/v3/process/:id/command`. */
export const COMMANDS = ['start', 'stop', 'restart', 'reload'] as const;
export type Command = (typeof COMMANDS)[number];

/** Period of the supervision timer (stale, limits, rates, cleanup), milliseconds. */
const TICK_MS = 1000;

/**
 * The processes of the server (SPEC §7): their definitions, persistence in `<db.dir>/db.json`,
 * their supervisors, cleanup rules, and the operations of the process API. Operations on one
 * process are serialised; different processes never wait for each other.
 */
export class ProcessService {
  private readonly entries = new Map<string, ProcessEntry>();
  private readonly locks = new KeyedLocks();
  private readonly prefixes = new OutputPrefixIndex();
  /** The mount hook that meters memfs reads of process inputs; app.ts registers it. */
  readonly inputReadMeter = new InputReadMeter((ref, bytes) => this.onInputRead(ref, bytes));
  /** Times any process entered each state since the server started (`ffmpeg_process`). */
  readonly stateEntries: StateCounts = zeroStateCounts();
  private readonly db: ProcessStore;
  private memfsUrl = 'http://127.0.0.1/memfs';
  private encoder: EncoderInfo = { version: '', progressStreams: false };
  private ticker: NodeJS.Timeout | undefined;
  private cleaning = false;
  private closing = false;
  private unsubscribe: (() => void) | undefined;
  private readonly factory: EntryFactory;
  private readonly mask: CredentialMask;
  private readonly access: EncoderAccess;

  private constructor(private readonly deps: ProcessServiceDeps) {
    this.mask = createCredentialMask([
      ...memfsSecrets(deps.config.storage.memory.auth),
      ...(deps.secrets ?? []),
    ]);
    this.access = new EncoderAccess({
      config: deps.config,
      diskRoot: deps.filesystems.disk.root,
      configFile: deps.configFile,
    });
    this.db = new ProcessStore(deps.config.db.dir, deps.logger, () =>
      [...this.entries.values()].map((entry) => ({
        config: entry.config,
        createdAt: entry.createdAt,
        updatedAt: entry.updatedAt,
        order: entry.supervisor.order,
        metadata: entry.metadata,
      })),
    );
    this.factory = new EntryFactory({
      ...deps,
      diskRoot: deps.filesystems.disk.root,
      placeholders: () => this.placeholders(),
      encoder: () => this.encoder,
      lookup: (id) => this.entries.get(id)?.config,
      onStateChange: (to) => this.stateEntries[to]++,
      mask: this.mask,
    });
  }

  /** Loads `db.json`; a file that cannot be read stops start-up rather than being overwritten. */
  static async create(deps: ProcessServiceDeps): Promise<ProcessService> {
    const service = new ProcessService(deps);
    await service.load();
    return service;
  }

  // ---- lifecycle ----

  /** After the server listens: learn the memfs URL, probe the encoder, start what was running. */
  async start(baseUrl: string): Promise<void> {
    this.memfsUrl = memfsUrl(baseUrl, this.deps.config);
    this.access.listening(baseUrl);
    this.encoder = await probeEncoder(this.deps.config.ffmpeg.binary, this.deps.spawn);
    if (this.encoder.version === '') {
      this.deps.logger.warn(
        { binary: this.deps.config.ffmpeg.binary },
        'the encoder binary did not answer like ffmpeg',
      );
    }
    this.rebuildPrefixes();
    this.unsubscribe = this.deps.filesystems.mem.onWrite((path, bytes) => this.onMemWrite(path, bytes));
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
    for (const entry of this.sortedEntries()) {
      if (entry.supervisor.order !== 'start') continue;
      if (this.slotsFull(entry.config.id)) {
        entry.report.addLine(this.nowSeconds(), 'streamcore: not started: ffmpeg.max_processes reached');
        continue;
      }
      entry.supervisor.start();
    }
  }

  /** Stops every process (orders kept), runs the purges, writes the db (SPEC §7.3 shutdown). */
  async shutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.ticker);
    this.unsubscribe?.();
    const entries = [...this.entries.values()];
    await Promise.all(entries.map((entry) => entry.supervisor.dispose()));
    await this.purge(entries.flatMap((entry) => this.rulesOf(entry)));
    await this.db.save();
    await this.factory.close();
  }

  // ---- queries ----

  ids(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** The entry of `id`, or a 404 `Unknown process ID`. */
  entry(id: string): ProcessEntry {
    const entry = this.entries.get(id);
    if (entry === undefined) {
      throw new ApiError('NOT_FOUND', `process "${id}" does not exist`, { message: 'Unknown process ID' });
    }
    return entry;
  }

  sortedEntries(): ProcessEntry[] {
    return this.ids().map((id) => this.entries.get(id) as ProcessEntry);
  }

  now(): number {
    return this.deps.now();
  }

  // ---- operations ----

  async create(body: unknown): Promise<ProcessConfig> {
    this.ensureOpen();
    const config = readOrThrow(body);
    // The processes its inputs read from are held too: none of them is renamed or deleted
    // between the check of the references and the creation.
    return this.locks.run(this.lockKeys([config.id], config), async () => {
      this.validate(config);
      if (this.entries.has(config.id)) {
        throw invalid([`id: a process with id "${config.id}" already exists`]);
      }
      if (config.autostart && this.slotsFull(config.id))
        throw maxProcessesError(this.deps.config.ffmpeg.max_processes);
      const now = this.nowSeconds();
      const entry = await this.factory.create(config, { createdAt: now, updatedAt: now, metadata: {} });
      this.db.release(config.id);
      this.entries.set(config.id, entry);
      this.rebuildPrefixes();
      if (config.autostart) entry.supervisor.start();
      await this.db.save();
      return config;
    });
  }

  /**
   * Merges `body` over the current config and replaces the process (SPEC §7.2 PUT). The current
   * config is read, merged and validated under the process's lock, so that concurrent updates
   * apply one after the other and none is lost.
   */
  async update(id: string, body: unknown): Promise<ProcessConfig> {
    this.ensureOpen();
    const current = this.entry(id);
    if (!isObject(body))
      throw invalid([body === undefined ? 'body: a JSON object is required' : 'body: must be a JSON object']);
    // The keys (new id, referenced processes) depend on the merged config; guessed from the
    // current one, checked again under the locks, and taken again when an update in between
    // changed them. The attempts are bounded; the last one goes on with the keys it holds.
    let keys = this.lockKeys([id], readProcessConfig(mergeOver(configToPlain(current.config), body)).config);
    for (let attempt = 1; ; attempt++) {
      const held = keys;
      const updated = await this.locks.run(held, async () => {
        const old = this.entry(id);
        const config = readOrThrow(mergeOver(configToPlain(old.config), body));
        keys = this.lockKeys([id], config);
        if (attempt < MAX_LOCK_ATTEMPTS && keys.some((key) => !held.includes(key))) return undefined;
        this.validate(config);
        if (config.id !== id && this.entries.has(config.id)) {
          throw invalid([`id: cannot rename "${id}" to "${config.id}", a process with that id exists`]);
        }
        await this.replace(old, config);
        return config;
      });
      if (updated !== undefined) return updated;
    }
  }

  /** Stops the process, purges its `purge_on_delete` files and forgets it. */
  async remove(id: string): Promise<void> {
    this.ensureOpen();
    await this.locks.run([id], async () => {
      const entry = this.entry(id);
      await entry.supervisor.dispose();
      this.entries.delete(id);
      this.rebuildPrefixes();
      await this.purge(this.rulesOf(entry));
      await this.db.save();
    });
  }

  async runCommand(id: string, command: Command): Promise<void> {
    this.ensureOpen();
    await this.locks.run([id], async () => {
      const entry = this.entry(id);
      const supervisor = entry.supervisor;
      switch (command) {
        case 'start':
          if (!supervisor.occupiesSlot && this.slotsFull(id))
            throw maxProcessesError(this.deps.config.ffmpeg.max_processes);
          supervisor.start();
          break;
        case 'stop':
          await supervisor.stop();
          break;
        case 'restart':
          if (!supervisor.occupiesSlot && this.slotsFull(id))
            throw maxProcessesError(this.deps.config.ffmpeg.max_processes);
          await supervisor.restart();
          break;
        case 'reload':
          await this.reload(entry);
          break;
      }
      await this.db.save();
    });
  }

  metadata(id: string): Record<string, unknown> {
    return this.entry(id).metadata;
  }

  /** Sets one metadata key; `null` deletes it. Returns what is stored now. */
  async setMetadata(id: string, key: string, value: unknown): Promise<unknown> {
    this.ensureOpen();
    return this.locks.run([id], async () => {
      const entry = this.entry(id);
      if (value === null) delete entry.metadata[key];
      else entry.metadata[key] = value;
      await this.db.save();
      return value;
    });
  }

  /** The server-wide metadata, stored in db.json beside the processes (`/api/v3/metadata`). */
  get systemMetadata(): {
    read(): Record<string, unknown>;
    replace(next: Record<string, unknown>): Promise<void>;
  } {
    return {
      read: () => this.db.systemMetadata(),
      replace: async (next) => {
        this.ensureOpen();
        await this.db.replaceSystemMetadata(next);
      },
    };
  }

  /** The probe of a process (`/api/v3/process/:id/probe`): its inputs, and the credential mask. */
  get probeSource(): { probeArgs(id: string): string[]; mask(text: string): string } {
    return {
      probeArgs: (id) => {
        const entry = this.entry(id);
        try {
          return this.factory.probeArgs(entry.config);
        } catch (error) {
          throw new ApiError('BAD_REQUEST', (error as Error).message, { message: 'Invalid input' });
        }
      },
      mask: this.mask,
    };
  }

  /** The command line a process runs (or would run next), credentials masked. */
  commandLine(entry: ProcessEntry): string[] {
    if (entry.supervisor.maskedCommand.length > 0) return entry.supervisor.maskedCommand;
    try {
      return [this.deps.config.ffmpeg.binary, ...this.factory.prepare(entry.config).args].map(this.mask);
    } catch {
      return [];
    }
  }

  /** The global placeholder values (disk directory, memfs URL with credentials). */
  placeholders(): PlaceholderValues {
    return { diskfs: this.deps.filesystems.disk.root, memfs: this.memfsUrl, templates: this.deps.templates };
  }

  // ---- internals ----

  private async reload(entry: ProcessEntry): Promise<void> {
    const order = entry.supervisor.order;
    await entry.supervisor.dispose();
    const fresh = await this.factory.create(entry.config, entry);
    fresh.report.adopt(entry.report);
    fresh.supervisor.adoptCounts(entry.supervisor);
    this.entries.set(entry.config.id, fresh);
    this.rebuildPrefixes();
    if (order === 'start') fresh.supervisor.start();
  }

  /** Replaces the runtime of `old` by one for `config` (update); the caller holds the locks. */
  private async replace(old: ProcessEntry, config: ProcessConfig): Promise<void> {
    const order = old.supervisor.order;
    await old.supervisor.dispose();
    await this.purge(this.rulesOf(old));
    const entry = await this.factory.create(config, {
      createdAt: old.createdAt,
      updatedAt: this.nowSeconds(),
      metadata: old.metadata,
    });
    entry.report.adopt(old.report);
    entry.supervisor.adoptCounts(old.supervisor);
    this.entries.delete(old.config.id);
    this.db.release(config.id);
    this.entries.set(config.id, entry);
    this.rebuildPrefixes();
    if (order === 'start') entry.supervisor.start();
    await this.db.save();
  }

  /** The semantic checks (SPEC §7.1) against the current processes; throws a 400. */
  private validate(config: ProcessConfig): void {
    const problems = validateProcessConfig(config, this.validationContext());
    if (problems.length > 0) throw invalid(problems);
  }

  /** `ids` and the processes the inputs of `config` read from (`#<id>:output=…`). */
  private lockKeys(ids: string[], config: ProcessConfig | undefined): string[] {
    if (config === undefined) return ids;
    const resolved = resolveConfig(config, this.placeholders());
    const referenced = resolved.input.flatMap(
      (input) => parseOutputReference(input.address)?.processId ?? [],
    );
    return [...new Set([...ids, config.id, ...referenced])].sort();
  }

  private validationContext() {
    return {
      placeholders: this.placeholders(),
      access: (resolved: ProcessConfig, written: ProcessConfig) => this.access.check(resolved, written),
      lookup: (other: string) => this.entries.get(other)?.config,
    };
  }

  private rulesOf(entry: ProcessEntry): CompiledRule[] {
    const resolved = resolveConfig(entry.config, this.placeholders());
    return resolved.output.flatMap((output) =>
      output.cleanup.map(compileRule).filter((rule): rule is CompiledRule => rule !== undefined),
    );
  }

  private async purge(rules: CompiledRule[]): Promise<void> {
    try {
      await purgeFiles(rules, this.deps.filesystems);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'purging process files failed');
    }
  }

  private slotsFull(exceptId: string): boolean {
    const max = this.deps.config.ffmpeg.max_processes;
    if (max <= 0) return false;
    let used = 0;
    for (const [id, entry] of this.entries) if (id !== exceptId && entry.supervisor.occupiesSlot) used++;
    return used >= max;
  }

  private tick(): void {
    const now = this.deps.now();
    for (const entry of this.entries.values()) {
      entry.supervisor.tick(now).catch((error: unknown) => {
        this.deps.logger.error({ err: error, process: entry.config.id }, 'process tick failed');
      });
    }
    if (this.cleaning) return;
    const rules = [...this.entries.values()].flatMap((entry) => this.rulesOf(entry));
    if (rules.length === 0) return;
    this.cleaning = true;
    applyCleanup(rules, this.deps.filesystems, now)
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'cleanup rules failed'))
      .finally(() => (this.cleaning = false));
  }

  private onMemWrite(path: string, bytes: number): void {
    const match = this.prefixes.find(path);
    if (match === undefined) return;
    this.entries.get(match.processId)?.supervisor.addOutputBytes(match.output, bytes);
  }

  private onInputRead(ref: InputRef, bytes: number): void {
    const entry = this.entries.get(ref.processId);
    if (entry === undefined || ref.input >= entry.config.input.length) return;
    entry.supervisor.addInputBytes(ref.input, bytes);
  }

  private rebuildPrefixes(): void {
    const all: OutputPrefix[] = [];
    for (const entry of this.entries.values()) {
      const resolved = resolveConfig(entry.config, this.placeholders());
      resolved.output.forEach((output, index) => {
        for (const prefix of memfsPrefixes(output, this.memfsUrl))
          all.push({ processId: entry.config.id, output: index, prefix });
      });
    }
    this.prefixes.replace(all);
  }

  private async load(): Promise<void> {
    const loaded = await this.db.load((config, lookup) =>
      validateProcessConfig(config, { ...this.validationContext(), lookup }),
    );
    for (const { config, stored } of loaded) {
      const entry = await this.factory.create(config, stored);
      if (stored.order === 'start') entry.supervisor.setOrder('start');
      this.entries.set(config.id, entry);
    }
  }

  private ensureOpen(): void {
    if (this.closing) throw new ApiError('SERVICE_UNAVAILABLE', 'the server is shutting down');
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.now() / 1000);
  }
}

/** Attempts of an update to hold the locks its merged config needs (see `update`). */
const MAX_LOCK_ATTEMPTS = 3;

/** The config read from a request body (shape and defaults), or a 400 naming every problem. */
function readOrThrow(body: unknown): ProcessConfig {
  const { config, problems } = readProcessConfig(body);
  if (config === undefined) throw invalid(problems);
  return config;
}

function invalid(problems: string[]): ApiError {
  return new ApiError('BAD_REQUEST', problems, { message: 'Invalid process config' });
}

function maxProcessesError(max: number): ApiError {
  return new ApiError(
    'BAD_REQUEST',
    `ffmpeg.max_processes: at most ${max} processes may run at the same time`,
    {
      message: 'Too many processes',
    },
  );
}
