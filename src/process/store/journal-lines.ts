import { isObject } from '../config/index.js';

/**
 * One line of `<db.dir>/db.journal`: the state after a change of the processes it names (their
 * entry as in `db.json`, or `null` when deleted), of their metadata (`null`: none), and of the
 * server-wide metadata when it changed. Each names whole values, never a difference, so replaying
 * a line twice (a crash between a compaction and the journal's truncation) changes nothing.
 */
export interface JournalLine {
  process?: Record<string, unknown>;
  metadata?: Record<string, Record<string, unknown> | null>;
  /** Single metadata keys by process id (`null`: the key was deleted); applied after `metadata`. */
  keys?: Record<string, Record<string, unknown>>;
  system?: Record<string, unknown>;
}

/**
 * Applies the complete lines of `journal` to the parsed db file `data` (v16 layout), in order. The
 * text after the last newline is a line whose write was cut off (a crash before it was synced, so
 * never acknowledged): it is ignored. A complete line that does not parse is a damaged file.
 */
export function replayJournal(data: Record<string, unknown>, journal: string, file: string): void {
  const process = ownObject(data, 'process');
  const metadata = ownObject(data, 'metadata');
  const processMetadata = ownObject(metadata, 'process');
  const end = journal.lastIndexOf('\n');
  if (end === -1) return;
  for (const [index, text] of journal.slice(0, end).split('\n').entries()) {
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch (error) {
      throw new Error(`${file} journal, line ${index + 1}: not valid JSON (${(error as Error).message})`);
    }
    if (!isObject(line)) throw new Error(`${file} journal, line ${index + 1}: not an object`);
    for (const [id, entry] of Object.entries(isObject(line.process) ? line.process : {})) {
      setOrDelete(process, id, entry);
      if (entry === null) delete processMetadata[id];
    }
    for (const [id, values] of Object.entries(isObject(line.metadata) ? line.metadata : {})) {
      setOrDelete(processMetadata, id, values);
    }
    for (const [id, keys] of Object.entries(isObject(line.keys) ? line.keys : {})) {
      if (!isObject(keys)) continue;
      const values = ownObject(processMetadata, id);
      for (const [key, value] of Object.entries(keys)) setOrDelete(values, key, value);
      if (Object.keys(values).length === 0) delete processMetadata[id];
    }
    if (isObject(line.system)) metadata.system = line.system;
  }
}

/** `parent[key]` as an object, made one when it is not. */
function ownObject(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = parent[key];
  if (isObject(value)) return value;
  const made: Record<string, unknown> = {};
  parent[key] = made;
  return made;
}

/** Sets `key` as an own property (an id such as `__proto__` must not reach the prototype). */
function setOrDelete(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value === null || value === undefined) delete target[key];
  else Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
