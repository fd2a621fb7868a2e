import { ApiError } from '../../http/index.js';
import type { ProcessConfig } from '../config/index.js';
import type { ProcessEntry } from './process-entry.js';

/**
 * The processes the server knows, by id: lookups for the API (404 for an unknown id), the configs
 * other processes' inputs refer to, and the slots of `ffmpeg.max_processes`.
 */
export class ProcessTable {
  private readonly entries = new Map<string, ProcessEntry>();

  /** How many processes are defined. */
  get size(): number {
    return this.entries.size;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get(id: string): ProcessEntry | undefined {
    return this.entries.get(id);
  }

  /** The entry of `id`, or a 404 `Unknown process ID`. */
  require(id: string): ProcessEntry {
    const entry = this.entries.get(id);
    if (entry === undefined) {
      throw new ApiError('NOT_FOUND', `process "${id}" does not exist`, { message: 'Unknown process ID' });
    }
    return entry;
  }

  set(entry: ProcessEntry): void {
    this.entries.set(entry.config.id, entry);
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  /** Sorted by id. */
  ids(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Sorted by id. */
  sorted(): ProcessEntry[] {
    return this.ids().map((id) => this.entries.get(id) as ProcessEntry);
  }

  /** In no particular order. */
  all(): IterableIterator<ProcessEntry> {
    return this.entries.values();
  }

  /** The stored config of `id` (placeholders kept), for the checks of input references. */
  storedConfig(id: string): ProcessConfig | undefined {
    return this.entries.get(id)?.config;
  }

  /** The resolved config of `id`, for following input references when a process starts. */
  resolvedConfig(id: string): ProcessConfig | undefined {
    return this.entries.get(id)?.resolved;
  }

  /** True when `max` (0 = no limit) processes other than `exceptId` hold a slot. */
  slotsFull(exceptId: string, max: number): boolean {
    if (max <= 0) return false;
    let used = 0;
    for (const [id, entry] of this.entries) if (id !== exceptId && entry.supervisor.occupiesSlot) used++;
    return used >= max;
  }
}
