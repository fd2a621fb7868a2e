import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import { NO_EVENTS, type EventSink } from '../../events/index.js';
import { ApiError } from '../../http/index.js';
import {
  MetadataBudget,
  metadataBytes,
  processOwner,
  SYSTEM_OWNER,
  type MetadataStore,
} from '../../metadata/index.js';
import type { Filesystem } from '../../storage/filesystem.js';
import type { MemfsWriteGrants } from '../../storage/index.js';
import {
  memfsPathProblems,
  memfsUrl,
  resolveConfig,
  validateProcessConfig,
  type PlaceholderTemplate,
  type PlaceholderValues,
  type ProcessConfig,
} from '../config/index.js';
import {
  ProcessStore,
  type ProcessRecord,
  type ProcessRecords,
  type ProcessStoreBackend,
} from '../store/index.js';
import {
  createCredentialMask,
  memfsSecrets,
  probeEncoder,
  zeroStateCounts,
  type CredentialMask,
  type EncoderInfo,
  type Schedule,
  type SpawnFn,
  type StateCounts,
} from '../supervise/index.js';
import type { LocalStreams } from '../fallback/index.js';
import { Housekeeping } from './housekeeping.js';
import { EncoderAccess } from './encoder-access.js';
import { EntryFactory, type PreparedProbe } from './entry-factory.js';
import { MemfsTraffic } from './memfs-traffic.js';
import { ProcessChanges, type Command } from './process-changes.js';
import type { ProcessEntry } from './process-entry.js';
import { ProcessTable } from './process-table.js';
import { shuttingDownError } from './service-errors.js';

export { COMMANDS, type Command } from './process-changes.js';

export interface ProcessServiceDeps {
  config: Config;
  logger: Logger;
  spawn: SpawnFn;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  /**
   * The timers of supervision (each second's tick, reconnect delays, SIGKILL after SIGINT), on
   * the clock of `now`; default the real ones. Tests move a clock instead of waiting them out.
   */
  schedule?: Schedule;
  /** Root of the proc filesystem, for CPU and memory of the children. */
  procRoot: string;
  /** Logical CPUs of the machine. */
  cpus: number;
  filesystems: {
    disk: Filesystem & { readonly root: string };
    mem: Filesystem;
    /** The S3 filesystems: `{fs:<name>}` is `<base URL><mount>`, and cleanup rules name them. */
    s3?: ReadonlyArray<Filesystem & { readonly mount: string }>;
  };
  /** Placeholders with parameters from other modules (`{rtmp,name=…}` from the ingest servers). */
  templates?: Readonly<Record<string, PlaceholderTemplate>>;
  /**
   * Secrets besides the memfs password that must not show in reports (`rtmp.token`), as they
   * stand now (a reload may change them; the ones held before stay masked too).
   */
  secrets?: () => readonly string[];
  /** The config file, which encoders must never read (it holds the JWT secret and passwords). */
  configFile?: string;
  /** Issues each encoder run its memfs write credential; undefined when memfs writes need none. */
  memfsGrants?: MemfsWriteGrants;
  /** Where process events go (created, updated, deleted, each state change); none without. */
  events?: EventSink;
  /** The ingest servers' own streams, which an input's fallback relay reads without a feeder. */
  localStreams?: LocalStreams;
  /** Where the processes are kept; default `<db.dir>/db.json` (a cluster gives its etcd store). */
  store?: (records: ProcessRecords) => ProcessStoreBackend;
}

/**
 * The processes of the server (docs/processes.md#the-contract), as the API and the collectors see them. A façade: it
 * wires the table of processes, their changes (process-changes.ts), the runtime factory, the
 * store (`<db.dir>/db.json`) and the memfs traffic, and runs the lifecycle: load, start once the
 * server listens, the supervision tick, shutdown.
 * Past 300 lines by its read-only views for other modules (API, metrics, widget, probe, metadata): each
 * is a few lines over the same private table, and moving them out would mean exposing the entries.
 */
export class ProcessService {
  private readonly table = new ProcessTable();
  private readonly traffic = new MemfsTraffic(this.table);
  /** The mount hook that meters memfs reads of process inputs; app.ts registers it. */
  readonly inputReadMeter = this.traffic.inputReadMeter;
  /** Times any process entered each state since the server started (`ffmpeg_process`). */
  readonly stateEntries: StateCounts = zeroStateCounts();
  private readonly db: ProcessStoreBackend;
  /** `api.limits.max_metadata_bytes`, shared by the processes' and the server's metadata. */
  private readonly metadataBudget: MetadataBudget;
  private readonly factory: EntryFactory;
  private readonly changes: ProcessChanges;
  /** Stable, handed to every entry; masks whatever `currentMask` masks now. */
  private readonly mask: CredentialMask = (text) => this.currentMask(text);
  private currentMask: CredentialMask = (text) => text;
  /** Every secret the server has held: lines from before a reload keep them. */
  private readonly heldSecrets = new Set<string>();
  private readonly access: EncoderAccess;
  /**
   * The server-wide placeholder values; replaced (not changed) once the server listens, so that a
   * change under way can tell that the values it resolved with are outdated.
   */
  private values: PlaceholderValues;
  private encoder: EncoderInfo = { version: '', progressStreams: false };
  private readonly housekeeping: Housekeeping;
  private closing = false;
  private unsubscribe: (() => void) | undefined;

  private constructor(private readonly deps: ProcessServiceDeps) {
    // `{memfs}` until the server listens and its address is known.
    const memfs = 'http://127.0.0.1/memfs';
    const s3 = Object.fromEntries(
      (deps.filesystems.s3 ?? []).map((fs) => [fs.name, `http://127.0.0.1${fs.mount}`]),
    );
    this.values = { diskfs: deps.filesystems.disk.root, memfs, s3, templates: deps.templates };
    this.refreshMask();
    this.access = new EncoderAccess({
      config: deps.config,
      diskRoot: deps.filesystems.disk.root,
      configFile: deps.configFile,
      memfsUrl: () => this.values.memfs,
      s3Url: (name) => this.values.s3?.[name] ?? '',
    });
    const record = (entry: ProcessEntry): ProcessRecord => ({
      config: entry.config,
      createdAt: entry.createdAt,
      updatedAt: entry.updatedAt,
      order: entry.supervisor.order,
      metadata: entry.metadata,
    });
    const records: ProcessRecords = {
      all: () => [...this.table.all()].map(record),
      one: (id) => {
        const entry = this.table.get(id);
        return entry === undefined ? undefined : record(entry);
      },
    };
    this.db = deps.store?.(records) ?? new ProcessStore(deps.config.db.dir, deps.logger, records);
    this.housekeeping = new Housekeeping(this.table, deps.filesystems, deps.logger, deps.now, deps.schedule);
    this.factory = new EntryFactory({
      ...deps,
      diskRoot: deps.filesystems.disk.root,
      placeholders: () => this.values,
      memfsGrants: deps.memfsGrants,
      encoder: () => this.encoder,
      lookup: (id) => this.table.resolvedConfig(id),
      lookupStored: (id) => this.table.storedConfig(id),
      onStateChange: (to) => this.stateEntries[to]++,
      mask: this.mask,
    });
    this.metadataBudget = new MetadataBudget(deps.config.api.limits.max_metadata_bytes);
    this.changes = new ProcessChanges({
      table: this.table,
      factory: this.factory,
      db: this.db,
      maxProcesses: deps.config.ffmpeg.max_processes,
      maxDefined: deps.config.api.limits.max_processes,
      metadataBudget: this.metadataBudget,
      access: (resolved, written) => this.access.check(resolved, written),
      placeholders: () => this.placeholders(),
      nowSeconds: () => Math.floor(deps.now() / 1000),
      changed: () => this.traffic.rebuild(this.values.memfs),
      purge: (entry) => this.housekeeping.purge([entry]),
      events: deps.events ?? NO_EVENTS,
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
    const s3 = Object.fromEntries(
      (this.deps.filesystems.s3 ?? []).map((fs) => [fs.name, baseUrl + fs.mount]),
    );
    this.values = { ...this.values, memfs: memfsUrl(baseUrl), s3 };
    this.access.listening(baseUrl);
    this.encoder = await probeEncoder(this.deps.config.ffmpeg.binary, this.deps.spawn);
    if (this.encoder.version === '') {
      this.deps.logger.warn(
        { binary: this.deps.config.ffmpeg.binary },
        'the encoder binary did not answer like ffmpeg',
      );
    }
    // The placeholder values known only once the server listens (memfs URL, ingest ports):
    // the configs loaded from the db are resolved again with them, once.
    for (const entry of this.table.all()) entry.resolved = resolveConfig(entry.config, this.values);
    this.traffic.rebuild(this.values.memfs);
    this.unsubscribe = this.deps.filesystems.mem.onWrite((path, bytes) =>
      this.traffic.onMemWrite(path, bytes),
    );
    this.housekeeping.start();
    const max = this.deps.config.ffmpeg.max_processes;
    for (const entry of this.table.sorted()) {
      if (entry.supervisor.order !== 'start') continue;
      if (this.table.slotsFull(entry.config.id, max)) {
        const now = Math.floor(this.deps.now() / 1000);
        entry.report.addLine(now, 'streamcore: not started: ffmpeg.max_processes reached');
        continue;
      }
      entry.supervisor.start();
    }
  }

  /**
   * The HTTP listener moved (a reload of `address`): `{memfs}` and the policy's own port are the
   * new ones for every run started from now. Running encoders keep the address they were given.
   */
  serverMoved(baseUrl: string): void {
    this.values = { ...this.values, memfs: memfsUrl(baseUrl) };
    this.access.listening(baseUrl);
    this.placeholdersChanged();
  }

  /**
   * What the placeholders stand for changed (a reload moved a listener or changed a token): every
   * process is resolved again, so that each run started from now gets the new values.
   */
  placeholdersChanged(): void {
    this.refreshMask();
    for (const entry of this.table.all()) entry.resolved = resolveConfig(entry.config, this.values);
    this.traffic.rebuild(this.values.memfs);
  }

  /**
   * Why memfs write authentication cannot be turned on while the processes run: each memfs path
   * an output of a started process names that no credential of its run can cover (no fixed start,
   * `{memfs}/%v.m3u8`), as `storage.memory.auth.enable: process "<id>" <problem>`. Every other run
   * writes with the credential of its own it was given at its start (docs/storage.md).
   */
  memfsAuthProblems(): string[] {
    return [...this.table.all()]
      .filter((entry) => entry.supervisor.order === 'start')
      .flatMap((entry) =>
        memfsPathProblems(entry.resolved, this.values.memfs).map(
          (problem) => `storage.memory.auth.enable: process ${JSON.stringify(entry.config.id)} ${problem}`,
        ),
      );
  }

  /** Masks the secrets as they stand in the running config, and every one held before. */
  private refreshMask(): void {
    const { memory, s3 } = this.deps.config.storage;
    const current = [
      ...memfsSecrets(memory.auth),
      // The S3 filesystems are mounted at start: their secrets are the ones read then.
      ...s3.flatMap((fs) => [fs.secret_access_key, ...memfsSecrets(fs.auth)]),
      ...(this.deps.secrets?.() ?? []),
    ];
    for (const secret of current) this.heldSecrets.add(secret);
    this.currentMask = createCredentialMask([...this.heldSecrets]);
  }

  /** Stops every process (orders kept), runs the purges, writes the db (docs/processes.md#states-orders-and-supervision). */
  async shutdown(): Promise<void> {
    this.closing = true;
    this.housekeeping.stop();
    this.unsubscribe?.();
    const entries = [...this.table.all()];
    await Promise.all(entries.map((entry) => entry.supervisor.dispose()));
    await this.housekeeping.purge(entries);
    await this.db.save();
    await this.db.close();
    await this.factory.close();
  }

  // ---- queries ----

  ids(): string[] {
    return this.table.ids();
  }

  /** The entry of `id`, or a 404 `Unknown process ID`. */
  entry(id: string): ProcessEntry {
    return this.table.require(id);
  }

  sortedEntries(): ProcessEntry[] {
    return this.table.sorted();
  }

  now(): number {
    return this.deps.now();
  }

  metadata(id: string): Record<string, unknown> {
    return this.entry(id).metadata;
  }

  /** The user's command of a process (`userCommand`), credentials masked; [] when it cannot be made. */
  commandLine(entry: ProcessEntry): string[] {
    try {
      return this.factory.userCommand(entry.resolved);
    } catch {
      return [];
    }
  }

  /** The global placeholder values (disk directory, memfs URL). */
  placeholders(): PlaceholderValues {
    return this.values;
  }

  // ---- operations (process-changes.ts) ----

  create(body: unknown): Promise<ProcessConfig> {
    this.ensureOpen();
    return this.changes.create(body);
  }

  update(id: string, body: unknown): Promise<ProcessConfig> {
    this.ensureOpen();
    return this.changes.update(id, body);
  }

  remove(id: string): Promise<void> {
    this.ensureOpen();
    return this.changes.remove(id);
  }

  runCommand(id: string, command: Command): Promise<void> {
    this.ensureOpen();
    return this.changes.runCommand(id, command);
  }

  /** Takes over a process kept elsewhere, as stored (docs/cluster.md); writes nothing. */
  adopt(record: ProcessRecord): Promise<void> {
    this.ensureOpen();
    return this.changes.adopt(record);
  }

  /** Stops and forgets a process without writing (docs/cluster.md); unknown ids are ignored. */
  detach(id: string): Promise<void> {
    return this.changes.detach(id);
  }

  /** Sets one metadata key; `null` deletes it. Returns what is stored now. */
  setMetadata(id: string, key: string, value: unknown): Promise<unknown> {
    this.ensureOpen();
    return this.changes.setMetadata(id, key, value);
  }

  /** The server-wide metadata, stored in db.json beside the processes (`/api/v3/metadata`). */
  get systemMetadata(): MetadataStore {
    return {
      budget: this.metadataBudget,
      read: () => this.db.systemMetadata(),
      replace: async (next) => {
        this.ensureOpen();
        await this.db.replaceSystemMetadata(next);
      },
    };
  }

  /** The public figures of a process (`/api/v3/widget/process/:id`); 404 when unknown. */
  widgetFigures(id: string): { reference: string; uptimeSeconds: number } {
    const entry = this.entry(id);
    const supervisor = entry.supervisor;
    const running = supervisor.state === 'running';
    return {
      reference: entry.config.reference,
      uptimeSeconds: running ? Math.floor(supervisor.stateSeconds(this.deps.now())) : 0,
    };
  }

  /**
   * The probe of a process (`/api/v3/process/:id/probe`) or of a config that is not one
   * (`POST /api/v3/process/probe`, checked as a create): the inputs, and the credential mask.
   */
  get probeSource(): {
    probeArgs(id: string): PreparedProbe;
    probeConfigArgs(body: unknown): PreparedProbe;
  } {
    const prepare = (config: ProcessConfig): PreparedProbe => {
      try {
        return this.factory.prepareProbe(config);
      } catch (error) {
        throw new ApiError('BAD_REQUEST', (error as Error).message, { message: 'Invalid input' });
      }
    };
    return {
      probeArgs: (id) => prepare(this.entry(id).config),
      probeConfigArgs: (body) => prepare(this.changes.checked(body)),
    };
  }

  // ---- internals ----

  /** The stored processes that read and validate, each resolved once and given a runtime. */
  private async load(): Promise<void> {
    const resolved = new Map<string, ProcessConfig>();
    const loaded = await this.db.load((config, lookup) => {
      const own = resolveConfig(config, this.values);
      resolved.set(config.id, own);
      return validateProcessConfig(config, own, {
        access: (resolved, written) => this.access.check(resolved, written),
        lookup,
        s3Names: Object.keys(this.values.s3 ?? {}),
      });
    });
    for (const { config, stored } of loaded) {
      const entry = await this.factory.create(config, resolved.get(config.id) as ProcessConfig, stored);
      if (stored.order === 'start') entry.supervisor.setOrder('start');
      this.table.set(entry);
      this.metadataBudget.record(processOwner(config.id), metadataBytes(entry.metadata));
    }
    this.metadataBudget.record(SYSTEM_OWNER, metadataBytes(this.db.systemMetadata()));
    await this.db.settle();
  }

  private ensureOpen(): void {
    if (this.closing) throw shuttingDownError();
  }
}
