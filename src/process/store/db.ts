import { readFile } from 'node:fs/promises';
import { isObject } from '../config/index.js';
import { replayJournal } from './journal-lines.js';
import { storeEntry, storeToBody, type StoredProcessSource } from './stored-form.js';
import type { Order } from '../supervise/index.js';

export { configToStore } from './stored-form.js';

/**
 * `<db.dir>/db.json` (docs/processes.md#states-orders-and-supervision), in the format of the datarhei Core v16 store (version 4), so
 * that a file written by either server loads in the other:
 * `{"version":4,"process":{<id>:<ProcessEntry>},"metadata":{"system":{},"process":{<id>:{...}}}}`;
 * the entry and its config's store form are derived from the process contract (stored-form.ts).
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
      body: storeToBody(config, id, value.reference),
      createdAt,
      updatedAt: typeof value.updated_at === 'number' ? value.updated_at : createdAt,
      order: value.order === 'start' ? 'start' : 'stop',
      metadata: isObject(meta) ? { ...meta } : {},
      verbatim: { key, process: value, metadataKey: id, metadata: meta },
    });
  }
  return { processes: result, unreadable, system: isObject(metadata.system) ? { ...metadata.system } : {} };
}

/** One process as it is written. */
export interface ProcessRecord extends StoredProcessSource {
  metadata: Record<string, unknown>;
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
