import { spawn as spawnChild } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { ApiError } from '../http/index.js';
import type { ProcessRecords, ProcessService, SpawnFn } from '../process/index.js';
import { EtcdClient, EtcdUnavailable } from './etcd-client.js';
import { EtcdProcessStore } from './etcd-process-store.js';
import { Fence } from './fence.js';
import { registerForwarding } from './forward.js';
import { registerMediaFromPeers } from './media.js';
import { registerProcessAliases } from './process-aliases.js';
import { registerClusterApi } from './api-routes.js';
import { keys } from './keys.js';
import { elect, leadOnce } from './leader.js';
import { reconcile } from './reconcile.js';
import { NodeTenure } from './node-tenure.js';
import { MachineLoad } from './resources.js';
import { EtcdProbe, everyPeerLostEtcd } from './quorum-check.js';
import { registerClusterRoutes, registerEtcdProbeRoute, type ClusterRouteSource } from './routes.js';
import { NodeSession } from './session.js';
import { SoonerReads } from './sooner-reads.js';
import { ClusterView, type ClusterSnapshot } from './view.js';
import { startWatchdog } from './watchdog.js';

/** How often the lease is renewed, and the picture of the cluster read, ms. */
const RENEW_MS = 1000;
const READ_MS = 500;
/**
 * While a node seems dead (its registration unchanged this long, ms) or its processes' moves are
 * awaited, the picture is read this often, for at most a lease time (sooner-reads.ts).
 */
const STALE_NODE_MS = 2500;
const SOONER_READ_MS = 100;
const FENCE_CHECK_MS = 100;
/** While the lease cannot be renewed, the peers are asked this often, at most this many questions at once. */
const QUORUM_QUESTION_MS = 500;
const MAX_QUORUM_QUESTIONS = 4;
/**
 * One call to one etcd member: a member without a leader holds a call until this passes, and a
 * renewal may try every member in turn.
 */
const ETCD_CALL_TIMEOUT_MS = 1000;
/** The watchdog kills this long before etcd could expire the lease (clock rates, a slow kill). */
const KILL_MARGIN_MS = 1000;
/** The server stops its encoders itself this long before the watchdog would. */
const STOP_AHEAD_MS = 1500;
/** Rebalancing (rebalance.ts): at most this many moves at once, then a pause of this long. */
const REBALANCE_MOVES = 2;
const REBALANCE_PAUSE_MS = 2000;

export interface ClusterDeps {
  config: Config;
  logger: Logger;
  now: () => number;
  fetch: typeof fetch;
}

/**
 * One node of a streamcore cluster (docs/cluster.md): its membership and fence, the picture of
 * the cluster it reads from etcd, the store the process service writes through, the leader's
 * work when it is the leader, and the routes. Built before the process service (which takes its
 * store and its spawn gate), attached to it, started once the server listens.
 * Past 300 lines: the node's cycle (renew the lease, read the cluster, act as leader, fence
 * on a lost lease) is one order in time that reads best in one place; each step's work is in
 * its own module.
 */
export class Cluster {
  readonly nodeId: string;
  private readonly etcd: EtcdClient;
  private readonly view: ClusterView;
  private readonly fence: Fence;
  private readonly session: NodeSession;
  private readonly load = new MachineLoad();
  private store: EtcdProcessStore | undefined;
  private service: ProcessService | undefined;
  private address = '';
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly busy = new Set<string>();
  private lastError = '';
  private closed = false;
  private readonly monotonic = (): number => performance.now();
  private readonly probe: EtcdProbe;
  /** Monotonic ms since etcd has answered this node without a failure in between. */
  private connectedSince: number;
  /** Monotonic ms of the last renewal of the lease. */
  private renewedAt = 0;
  /** Monotonic ms of this node's last rebalancing moves as the leader. */
  private rebalancedAt = -Infinity;
  private readonly tenure = new NodeTenure(this.monotonic);
  private readonly sooner: SoonerReads;

  constructor(private readonly deps: ClusterDeps) {
    const { cluster } = deps.config;
    this.nodeId = cluster.node_id || deps.config.id;
    const monotonic = this.monotonic;
    this.connectedSince = monotonic();
    this.etcd = new EtcdClient({
      endpoints: cluster.etcd.endpoints,
      username: cluster.etcd.username,
      password: cluster.etcd.password,
      tls: { caFile: cluster.etcd.ca_file, certFile: cluster.etcd.cert_file, keyFile: cluster.etcd.key_file },
      timeoutMs: ETCD_CALL_TIMEOUT_MS,
    });
    this.view = new ClusterView(this.etcd, monotonic);
    this.probe = new EtcdProbe(this.etcd, monotonic);
    const ttlMs = cluster.lease_ttl_sec * 1000;
    this.sooner = new SoonerReads(STALE_NODE_MS, ttlMs, monotonic);
    this.fence = new Fence(ttlMs, KILL_MARGIN_MS, monotonic, startWatchdog());
    this.session = new NodeSession({
      etcd: this.etcd,
      fence: this.fence,
      nodeId: this.nodeId,
      address: () => this.address,
      ttlSeconds: cluster.lease_ttl_sec,
      resources: () => this.resources(),
      monotonic,
      now: deps.now,
      logger: deps.logger,
    });
  }

  /** The process service's store (ProcessServiceDeps.store). */
  readonly storeFor = (records: ProcessRecords): EtcdProcessStore => {
    this.store = new EtcdProcessStore(this.etcd, this.view, this.session, records, this.deps.logger);
    return this.store;
  };

  /**
   * Encoders start only while the fence holds: a supervisor that would restart one on a node
   * that lost its lease gets a spawn that fails (as a missing binary does) instead.
   */
  gate(spawn: SpawnFn): SpawnFn {
    return (command, args, options) => {
      if (this.fence.mayRun()) return spawn(command, args, options);
      this.deps.logger.warn({ command }, 'cluster: not started, this node has no lease');
      return spawnChild('/nonexistent/streamcore-node-has-no-lease', [], { stdio: 'ignore' });
    };
  }

  attach(service: ProcessService): void {
    this.service = service;
  }

  registerForwarding(server: FastifyInstance): void {
    registerEtcdProbeRoute(server, this.routeSource());
    registerMediaFromPeers(server, {
      me: this.nodeId,
      mode: this.deps.config.cluster.media,
      snapshot: () => this.view.snapshot,
      fetch: this.deps.fetch,
    });
    registerForwarding(server, {
      me: this.nodeId,
      selfAddress: () => this.address,
      snapshot: () => this.view.snapshot,
      pictureAfter: (mark) => this.view.pictureAfter(mark),
      readsStarted: () => this.view.readsStarted,
      references: this.deps.config.cluster.reference_placement,
      fetch: this.deps.fetch,
      logger: this.deps.logger,
    });
  }

  registerApi(v3: FastifyInstance): void {
    registerClusterRoutes(v3, this.routeSource());
    registerProcessAliases(v3, () => this.address, this.deps.fetch);
    registerClusterApi(v3, {
      me: this.nodeId,
      selfAddress: () => this.address,
      snapshot: () => this.view.snapshot,
      refresh: () => this.view.refresh(),
      fetch: this.deps.fetch,
      degradedError: () => this.lastError,
      now: this.deps.now,
      etcd: this.etcd,
    });
  }

  private routeSource(): ClusterRouteSource {
    return {
      me: this.nodeId,
      snapshot: () => this.view.snapshot,
      staleMs: () => this.view.staleMs(),
      degradedError: () => this.lastError,
      now: this.deps.now,
      setNodeState: (id, state) => this.setNodeState(id, state),
      etcdReachable: (arrivedAt) => this.probe.reachable(arrivedAt),
      monotonic: this.monotonic,
    };
  }

  /** Once the server listens: join, and keep the membership, the picture and the work going. */
  start(baseUrl: string): void {
    this.address = this.deps.config.cluster.advertise_address.replace(/\/+$/, '') || baseUrl;
    this.every('session', RENEW_MS, () => this.renew());
    // A failover waits for no periodic read: the leader sees the lease expire, the nodes the moves.
    this.every(
      'view',
      READ_MS,
      () => this.step(),
      (read) => {
        if (this.sooner.wanted(this.view.snapshot)) setTimeout(read, SOONER_READ_MS).unref();
      },
    );
    this.every('fence', FENCE_CHECK_MS, () => this.checkFence());
    // Not one after the other: a question may wait for a slow peer, and each counts from when it was sent.
    let asking = 0;
    const ask = (): void => {
      if (this.closed || asking >= MAX_QUORUM_QUESTIONS) return;
      asking++;
      this.confirmQuorumLoss()
        .catch((error: unknown) => this.failed(error))
        .finally(() => asking--);
    };
    this.timers.push(setInterval(ask, QUORUM_QUESTION_MS));
  }

  /**
   * The HTTP listener moved (a reload of `address`): without an `advertise_address` the node is
   * reached at the new one, written with the next renewal of its registration.
   */
  serverMoved(baseUrl: string): void {
    if (this.deps.config.cluster.advertise_address === '') this.address = baseUrl;
  }

  /** Stops this node's encoders, then gives up the lease so that the leader moves them at once. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.detachAll();
    await this.session.leave();
    this.etcd.close();
    this.fence.close();
  }

  /** Runs `work` every `ms`, never twice at once; `then` may ask for a run before the next one. */
  private every(
    name: string,
    ms: number,
    work: () => Promise<void>,
    then: (again: () => void) => void = () => undefined,
  ): void {
    const run = (): void => {
      if (this.closed || this.busy.has(name)) return;
      this.busy.add(name);
      work()
        .catch((error: unknown) => this.failed(error))
        .finally(() => {
          this.busy.delete(name);
          if (!this.closed) then(run);
        });
    };
    this.timers.push(setInterval(run, ms));
    run();
  }

  private async renew(): Promise<void> {
    const renewed = await this.session.tick();
    this.connected();
    this.renewedAt = this.monotonic();
    if (!renewed) await this.detachAll();
  }

  /**
   * While the lease cannot be renewed, the encoders stay only as long as no node can reach etcd
   * (quorum-check.ts says why that is safe): each time every peer says so, by a probe started
   * after the question was sent, the fence counts from the question.
   */
  private async confirmQuorumLoss(): Promise<void> {
    if (this.session.currentLease === undefined) return;
    if (this.monotonic() - this.renewedAt < 2 * RENEW_MS) return;
    const sentAt = this.monotonic();
    const peers = [...this.view.snapshot.nodes.values()].filter((node) => node.id !== this.nodeId);
    if (await everyPeerLostEtcd(peers, this.deps.fetch, this.deps.logger)) this.fence.renewed(sentAt);
  }

  /** etcd answered: a node that was cut off counts its connection from now (leader.ts). */
  private connected(): void {
    if (this.lastError !== '') this.connectedSince = this.monotonic();
  }

  private async step(): Promise<void> {
    const snapshot = await this.view.refresh();
    this.connected();
    this.lastError = '';
    const service = this.service;
    const store = this.store;
    const lease = this.session.currentLease;
    if (service === undefined || store === undefined || lease === undefined || !this.fenceHolds()) return;
    await this.reconcile(snapshot, service, store);
    // A node elected now leads on the picture it was elected on (every move compares what it
    // read), rather than a read later: a dead leader's processes wait no longer for it.
    if (!(await elect(snapshot, this.etcd, this.nodeId, lease))) return;
    const ttlMs = this.deps.config.cluster.lease_ttl_sec * 1000;
    const mayMoveFromDead = this.monotonic() - this.connectedSince >= ttlMs;
    const paused = this.monotonic() - this.rebalancedAt < REBALANCE_PAUSE_MS;
    const { moved, rebalanced } = await leadOnce(snapshot, this.etcd, this.nodeId, this.deps.logger, {
      mayMoveFromDead,
      references: this.deps.config.cluster.reference_placement,
      rebalance: paused ? 0 : REBALANCE_MOVES,
      receivers: this.tenure.steady(snapshot, ttlMs),
    });
    if (rebalanced > 0) this.rebalancedAt = this.monotonic();
    // What it just gave itself need not wait for the next read.
    if (moved > 0 && this.fenceHolds()) await this.reconcile(await this.view.refresh(), service, store);
  }

  private reconcile(
    snapshot: ClusterSnapshot,
    service: ProcessService,
    store: EtcdProcessStore,
  ): Promise<void> {
    return reconcile(snapshot, {
      me: this.nodeId,
      service,
      store,
      etcd: this.etcd,
      logger: this.deps.logger,
      mayRun: () => this.fenceHolds(),
    });
  }

  private fenceHolds(): boolean {
    return this.fence.mayRun() && this.fence.remainingMs() > STOP_AHEAD_MS;
  }

  /** The lease may expire soon (etcd has not answered for a while): stop everything first. */
  private async checkFence(): Promise<void> {
    if (this.session.currentLease === undefined && this.service?.ids().length === 0) return;
    if (this.fence.remainingMs() > STOP_AHEAD_MS) return;
    if ((this.service?.ids().length ?? 0) === 0) return;
    this.deps.logger.warn(
      { node: this.nodeId },
      "cluster: the lease could not be renewed in time; stopping this node's encoders",
    );
    await this.detachAll();
  }

  private async detachAll(): Promise<void> {
    const service = this.service;
    if (service === undefined) return;
    await Promise.all(
      service.ids().map(async (id) => {
        await service.detach(id);
        this.store?.forgotten(id);
      }),
    );
  }

  private async setNodeState(id: string, state: 'online' | 'maintenance'): Promise<void> {
    try {
      if (state === 'online') await this.etcd.txn([], [{ delete: { key: keys.nodeState(id) } }]);
      else await this.etcd.txn([], [{ put: { key: keys.nodeState(id), value: JSON.stringify({ state }) } }]);
    } catch (error) {
      if (!(error instanceof EtcdUnavailable)) throw error;
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'etcd has no quorum or cannot be reached: the cluster takes no changes until it is back',
        {
          message: 'Cluster unavailable',
        },
      );
    }
    if (state === 'online') this.view.snapshot.nodeStates.delete(id);
    else this.view.snapshot.nodeStates.set(id, state);
  }

  private failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (this.lastError === '')
      this.deps.logger.warn({ err: error }, `cluster: etcd cannot be reached: ${message}`);
    this.lastError = message;
  }

  private resources() {
    const entries = this.service?.sortedEntries() ?? [];
    const running = entries.filter((entry) => entry.supervisor.state === 'running').length;
    return this.load.sample(running, this.deps.config.ffmpeg.max_processes);
  }
}
