import type { ProcessConfig } from '../config/index.js';
import type { DbChange } from './db-journal.js';
import type { StoredProcess } from './db.js';
import type { LoadedProcess } from './process-store.js';

/**
 * Where the process service keeps its processes: `db.json` on a single node (ProcessStore), etcd
 * in a cluster (cluster/etcd-process-store.ts). The service calls these and nothing else.
 */
export interface ProcessStoreBackend {
  /** The stored processes that read and validate (`validate` may look up the other configs). */
  load(
    validate: (config: ProcessConfig, lookup: (id: string) => ProcessConfig | undefined) => string[],
  ): Promise<LoadedProcess[]>;
  /** Persists a change; on failure runs `undo` and throws the error the client gets. */
  save(change?: DbChange, undo?: () => void): Promise<void>;
  systemMetadata(): Record<string, unknown>;
  replaceSystemMetadata(next: Record<string, unknown>): Promise<void>;
  /** After the loaded processes are in memory. */
  settle(): Promise<void>;
  close(): Promise<void>;
  /** A process with this id now exists; returns the undo of that. */
  release(id: string): () => void;
}

export type { StoredProcess, LoadedProcess };
