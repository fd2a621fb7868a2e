/**
 * The keys of a streamcore cluster in etcd (docs/cluster.md#keys), all under one prefix, and the
 * JSON each holds.
 */
export const PREFIX = '/streamcore/';

export const keys = {
  /** A node's registration, under its lease: gone when the node is. */
  node: (id: string) => `${PREFIX}nodes/${id}`,
  /** A node's state as an operator set it (`maintenance`), kept across the node's restarts. */
  nodeState: (id: string) => `${PREFIX}node-state/${id}`,
  /** The elected leader's id, under the leader's lease. */
  leader: `${PREFIX}leader`,
  /** A process's definition and metadata; written by the node it runs on. */
  process: (id: string) => `${PREFIX}processes/${id}`,
  /** Which node runs a process; written by its creator, then by the leader when it moves. */
  assign: (id: string) => `${PREFIX}assign/${id}`,
  /** The server-wide metadata (`/api/v3/metadata`). */
  system: `${PREFIX}system-metadata`,
  /** A value of the cluster's key-value store (`/api/v3/cluster/kv`), kept until deleted. */
  kv: (key: string) => `${PREFIX}kv/${key}`,
  /** A lock (`/api/v3/cluster/lock`), under a lease that ends when the lock does. */
  lock: (name: string) => `${PREFIX}locks/${name}`,
};

/** What a node tells about itself. */
export interface NodeRecord {
  id: string;
  /** Base URL of its API. */
  address: string;
  /** Unix ms of the last update (its own clock). */
  updatedAt: number;
  /** Unix ms when the node joined (its own clock); absent from nodes of an older version. */
  startedAt?: number;
  resources: NodeResources;
}

export interface NodeResources {
  ncpu: number;
  /** Percent of all CPUs in use, 0–100. */
  cpuUsage: number;
  memTotalBytes: number;
  memUsedBytes: number;
  /** Encoders running now. */
  encoders: number;
  /** `ffmpeg.max_processes` (0: no limit). */
  maxProcesses: number;
}

/**
 * Where a process runs. `after`: the node that ran it before a move; the new node starts it only
 * once that one has let go (it clears `after`) or is gone for good.
 */
export interface Assignment {
  node: string;
  after?: string;
}

/** A process as etcd holds it: the `db.json` entry, with its metadata. */
export interface ProcessDocument {
  id: string;
  reference: string;
  config: Record<string, unknown>;
  created_at: number;
  updated_at: number;
  order: string;
  metadata: Record<string, unknown>;
}

export type NodeState = 'online' | 'maintenance';
