import { readFile } from 'node:fs/promises';
import { isObject, type ProcessConfig } from '../config/index.js';
import { replayJournal } from './journal-lines.js';
import type { Order } from '../supervise/index.js';

/**
 * `<db.dir>/db.json` (docs/processes.md#states-orders-and-supervision), in the format of the datarhei Core v16 store (version 4), so
 * that a file written by either server loads in the other:
 * `{"version":4,"process":{<id>:{id,reference,config,created_at,updated_at,order}},
 *   "metadata":{"system":{},"process":{<id>:{...}}}}`, where `config` is the store form of a
 * process config (limits flattened to `limit_cpu_usage`, `limit_memory_bytes` in bytes,
 * `limit_waitfor_seconds`).
 */
export const DB_VERSION = 4;

/**
 * A stored entry exactly as it was found in the file, to be written back unchanged when the
 * server cannot use it: `process` is the value at `process[key]`, `metadata` the value at
 * `metadata.process[metadataKey]` (`undefined` when there is none).
 */
export interface VerbatimEntry {
  key: string;
  process: unknown;
  metadataKey: string;
  metadata: unknown;
}

/** One stored process. `body` is the config in API form, to be read and validated like a request. */
export interface StoredProcess {
  id: string;
  body: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  order: Order;
  metadata: Record<string, unknown>;
  /** The entry as found, for writing it back if it does not validate. */
  verbatim: VerbatimEntry;
}

export interface DbContent {
  processes: StoredProcess[];
  /** Entries that are not even objects: nothing to load, kept as found. */
  unreadable: VerbatimEntry[];
  /** Server-wide metadata, kept as it was found. */
  system: Record<string, unknown>;
}

export class DbFormatError extends Error {
  override name = 'DbFormatError';
}

/**
 * Reads the db file and replays its journal over it (`journal`: the journal's text, see
 * db-journal.ts); an absent file is an empty db, an unreadable one an error (never overwritten
 * blindly).
 */
export async function loadDb(file: string, journal = ''): Promise<DbContent> {
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text === undefined && journal === '') return { processes: [], unreadable: [], system: {} };
  let data: unknown = { version: DB_VERSION, process: {}, metadata: { system: {}, process: {} } };
  if (text !== undefined) {
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new DbFormatError(`${file}: not valid JSON (${(error as Error).message})`);
    }
  }
  if (journal !== '' && isObject(data)) {
    try {
      replayJournal(data, journal, file);
    } catch (error) {
      throw new DbFormatError((error as Error).message);
    }
  }
  return parseDb(data, file);
}

/** Parses the content of a db file (exported for tests). */
export function parseDb(data: unknown, file = 'db.json'): DbContent {
  if (!isObject(data)) throw new DbFormatError(`${file}: must hold a JSON object`);
  if (data.version !== DB_VERSION) {
    throw new DbFormatError(
      `${file}: unsupported version ${JSON.stringify(data.version)}, expected ${DB_VERSION}`,
    );
  }
  const processes = isObject(data.process) ? data.process : {};
  const metadata = isObject(data.metadata) ? data.metadata : {};
  const processMetadata = isObject(metadata.process) ? metadata.process : {};
  const result: StoredProcess[] = [];
  const unreadable: VerbatimEntry[] = [];
  for (const [key, value] of Object.entries(processes)) {
    if (!isObject(value)) {
      unreadable.push({ key, process: value, metadataKey: key, metadata: processMetadata[key] });
      continue;
    }
    const config = isObject(value.config) ? value.config : {};
    const id = typeof value.id === 'string' && value.id !== '' ? value.id : key;
    const createdAt = typeof value.created_at === 'number' ? value.created_at : 0;
    const meta = processMetadata[id];
    result.push({
      id,
      body: storeConfigToBody(config, id, value.reference),
      createdAt,
      updatedAt: typeof value.updated_at === 'number' ? value.updated_at : createdAt,
      order: value.order === 'start' ? 'start' : 'stop',
      metadata: isObject(meta) ? { ...meta } : {},
      verbatim: { key, process: value, metadataKey: id, metadata: meta },
    });
  }
  return { processes: result, unreadable, system: isObject(metadata.system) ? { ...metadata.system } : {} };
}

/** The store form of one process config. */
export function configToStore(config: ProcessConfig): Record<string, unknown> {
  const io = (list: ProcessConfig['input']): Record<string, unknown>[] =>
    list.map((item) => ({
      id: item.id,
      address: item.address,
      options: [...item.options],
      cleanup: item.cleanup.map((rule) => ({ ...rule })),
    }));
  return {
    id: config.id,
    reference: config.reference,
    ffversion: '',
    input: io(config.input),
    output: io(config.output),
    options: [...config.options],
    reconnect: config.reconnect,
    reconnect_delay_seconds: config.reconnect_delay_seconds,
    autostart: config.autostart,
    stale_timeout_seconds: config.stale_timeout_seconds,
    limit_cpu_usage: config.limits.cpu_usage,
    limit_memory_bytes: config.limits.memory_mbytes * 1024 * 1024,
    limit_waitfor_seconds: config.limits.waitfor_seconds,
  };
}

function storeConfigToBody(
  config: Record<string, unknown>,
  id: string,
  reference: unknown,
): Record<string, unknown> {
  const memoryBytes = config.limit_memory_bytes;
  return {
    ...config,
    id,
    type: 'ffmpeg',
    reference:
      typeof config.reference === 'string'
        ? config.reference
        : typeof reference === 'string'
          ? reference
          : '',
    limits: {
      cpu_usage: config.limit_cpu_usage,
      memory_mbytes: typeof memoryBytes === 'number' ? Math.ceil(memoryBytes / (1024 * 1024)) : memoryBytes,
      waitfor_seconds: config.limit_waitfor_seconds,
    },
  };
}

/** One process as it is written. */
export interface ProcessRecord {
  config: ProcessConfig;
  createdAt: number;
  updatedAt: number;
  order: Order;
  metadata: Record<string, unknown>;
}

/** The value at `process[<id>]` of the file for one process. */
export function storeEntry(record: ProcessRecord): Record<string, unknown> {
  return {
    id: record.config.id,
    reference: record.config.reference,
    config: configToStore(record.config),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    order: record.order,
  };
}

/** The whole file content for a set of processes, plus entries kept exactly as they were found. */
export function serializeDb(
  records: ProcessRecord[],
  system: Record<string, unknown>,
  kept: readonly VerbatimEntry[] = [],
): string {
  const process: Record<string, unknown> = {};
  const metadata: Record<string, unknown> = {};
  for (const entry of kept) {
    process[entry.key] = entry.process;
    if (entry.metadata !== undefined) metadata[entry.metadataKey] = entry.metadata;
  }
  for (const record of [...records].sort((a, b) => a.config.id.localeCompare(b.config.id))) {
    const id = record.config.id;
    process[id] = storeEntry(record);
    if (Object.keys(record.metadata).length > 0) metadata[id] = record.metadata;
  }
  return `${JSON.stringify({ version: DB_VERSION, process, metadata: { system, process: metadata } }, null, 2)}\n`;
}
