import { setTimeout as sleep } from 'node:timers/promises';
import type { EtcdClient, EtcdKv } from './etcd-client.js';
import { PREFIX, type Assignment, type NodeRecord, type NodeState, type ProcessDocument } from './keys.js';

/** A value read from etcd with the revision it was last written at (the compare of the next write). */
export interface Versioned<T> {
  value: T;
  modRevision: number;
}

/** Everything the cluster keeps in etcd, as read at one revision. */
export interface ClusterSnapshot {
  revision: number;
  /** The number of the read it came from (`ClusterView.readsStarted` when that read began). */
  read: number;
  nodes: Map<string, NodeRecord & { createRevision: number }>;
  nodeStates: Map<string, NodeState>;
  leader: string | undefined;
  processes: Map<string, Versioned<ProcessDocument>>;
  assignments: Map<string, Versioned<Assignment>>;
  system: Versioned<Record<string, unknown>> | undefined;
}

export function emptySnapshot(): ClusterSnapshot {
  return {
    revision: 0,
    read: 0,
    nodes: new Map(),
    nodeStates: new Map(),
    leader: undefined,
    processes: new Map(),
    assignments: new Map(),
    system: undefined,
  };
}

/** Reads asked for by requests (`pictureAfter`) start at most this often, ms. */
const ON_DEMAND_GAP_MS = 100;

/**
 * The cluster as last read: the whole prefix in one linearizable range, so that every node acts
 * on a consistent picture. A failed read keeps the last picture (reads answer from it while etcd
 * is away) and says since when it is stale.
 */
export class ClusterView {
  private current = emptySnapshot();
  /** Monotonic ms of the last successful read; undefined before the first. */
  private readAt: number | undefined;
  /** Reads begun so far: a picture from a read begun after some moment shows every write before it. */
  private reads = 0;
  /** The read begun last, while it runs. */
  private running: { read: number; picture: Promise<ClusterSnapshot> } | undefined;
  /** The read that requests waiting for a newer picture share, before it begins. */
  private queued: Promise<ClusterSnapshot> | undefined;
  private lastOnDemandAt = -Infinity;

  constructor(
    private readonly etcd: EtcdClient,
    private readonly monotonic: () => number,
    private readonly wait: (ms: number) => Promise<unknown> = (ms) => sleep(ms),
  ) {}

  get snapshot(): ClusterSnapshot {
    return this.current;
  }

  /** Milliseconds since the last successful read (Infinity before the first). */
  staleMs(): number {
    return this.readAt === undefined ? Infinity : this.monotonic() - this.readAt;
  }

  get readsStarted(): number {
    return this.reads;
  }

  refresh(): Promise<ClusterSnapshot> {
    const read = ++this.reads;
    const picture = this.readPicture(read);
    this.running = { read, picture };
    const done = (): void => {
      if (this.running?.read === read) this.running = undefined;
    };
    picture.then(done, done);
    return picture;
  }

  /**
   * A picture from a read begun after `mark` (`readsStarted` when a request arrived), which shows
   * every write answered before the request: the one already read or under way when it began
   * late enough, else the next read for requests, which every request waiting by then shares and
   * which begins at most every ON_DEMAND_GAP_MS. Requests for ids no node knows (a client trying
   * random ids) so cost etcd at most one read per gap, whatever their number.
   */
  pictureAfter(mark: number): Promise<ClusterSnapshot> {
    if (this.current.read > mark) return Promise.resolve(this.current);
    if (this.running !== undefined && this.running.read > mark) return this.running.picture;
    this.queued ??= this.onDemandGap().then(() => {
      // Runs after `queued` was set (a `then` never runs at once): whoever asks from now on
      // arrived after this read begins, and waits for the next one.
      this.queued = undefined;
      this.lastOnDemandAt = this.monotonic();
      return this.refresh();
    });
    return this.queued;
  }

  private async onDemandGap(): Promise<void> {
    const gap = this.lastOnDemandAt + ON_DEMAND_GAP_MS - this.monotonic();
    if (gap > 0) await this.wait(gap);
  }

  private async readPicture(read: number): Promise<ClusterSnapshot> {
    const { kvs, revision } = await this.etcd.range(PREFIX, true);
    const picture = parseSnapshot(kvs, revision, read);
    // Reads overlap (the periodic one and one a request asked for): a read begun earlier that
    // ends later must not replace the newer picture.
    if (read > this.current.read) {
      this.current = picture;
      this.readAt = this.monotonic();
    }
    return picture;
  }
}
function parseSnapshot(kvs: EtcdKv[], revision: number, read: number): ClusterSnapshot {
  const snapshot = emptySnapshot();
  snapshot.revision = revision;
  snapshot.read = read;
  for (const kv of kvs) {
    const rest = kv.key.slice(PREFIX.length);
    const slash = rest.indexOf('/');
    const kind = slash < 0 ? rest : rest.slice(0, slash);
    const id = slash < 0 ? '' : rest.slice(slash + 1);
    const value = parseJson(kv.value);
    if (value === undefined) continue;
    switch (kind) {
      case 'nodes':
        snapshot.nodes.set(id, { ...(value as NodeRecord), createRevision: kv.createRevision });
        break;
      case 'node-state':
        snapshot.nodeStates.set(id, (value as { state: NodeState }).state);
        break;
      case 'leader':
        snapshot.leader = typeof value === 'string' ? value : undefined;
        break;
      case 'processes':
        snapshot.processes.set(id, { value: value as ProcessDocument, modRevision: kv.modRevision });
        break;
      case 'assign':
        snapshot.assignments.set(id, { value: value as Assignment, modRevision: kv.modRevision });
        break;
      case 'system-metadata':
        snapshot.system = { value: value as Record<string, unknown>, modRevision: kv.modRevision };
        break;
    }
  }
  return snapshot;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
