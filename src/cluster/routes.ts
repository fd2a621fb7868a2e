import type { FastifyInstance } from 'fastify';
import { ApiError, RequestCheck } from '../http/index.js';
import {
  ClusterNodeStateBody,
  type ClusterAboutDto,
  type ClusterNodeStateDto,
  type EtcdProbeAnswerDto,
  type NodeParamsDto,
} from './contract.js';
import { nodeViews } from './node-view.js';
import { ETCD_PROBE_PATH } from './quorum-check.js';
import type { ClusterSnapshot } from './view.js';

const stateCheck = new RequestCheck(ClusterNodeStateBody);

/** What the cluster routes read and change. */
export interface ClusterRouteSource {
  me: string;
  snapshot(): ClusterSnapshot;
  /** Milliseconds since etcd was last read. */
  staleMs(): number;
  /** Why the picture may be outdated ('' when it is fresh). */
  degradedError(): string;
  now(): number;
  setNodeState(id: string, state: ClusterNodeStateDto['state']): Promise<void>;
  /** Whether etcd answers, by a probe started after `arrivedAt` (monotonic ms). */
  etcdReachable(arrivedAt: number): Promise<boolean>;
  monotonic(): number;
}

/** The peers' question, outside /api/v3: nodes ask it without a client's credentials. */
export function registerEtcdProbeRoute(server: FastifyInstance, source: ClusterRouteSource): void {
  server.get(ETCD_PROBE_PATH, { config: { public: true } }, async (): Promise<EtcdProbeAnswerDto> => {
    const arrivedAt = source.monotonic();
    return { etcd: (await source.etcdReachable(arrivedAt)) ? 'reachable' : 'unreachable' };
  });
}

/** `GET /api/v3/cluster` and `PUT /api/v3/cluster/node/:id/state` (the reference's shapes). */
export function registerClusterRoutes(v3: FastifyInstance, source: ClusterRouteSource): void {
  v3.get('/cluster', (): ClusterAboutDto => about(source));

  v3.put<{ Params: NodeParamsDto }>('/cluster/node/:id/state', async (request) => {
    const { id } = request.params;
    if (!source.snapshot().nodes.has(id) && !source.snapshot().nodeStates.has(id))
      throw new ApiError('NOT_FOUND', `node "${id}" is not in the cluster`, { message: 'Unknown node' });
    const read = stateCheck.read(request.body);
    if (read.value === undefined)
      throw new ApiError('BAD_REQUEST', read.problems, { message: 'Invalid node state' });
    await source.setNodeState(id, read.value.state);
    return read.value;
  });
}

function about(source: ClusterRouteSource): ClusterAboutDto {
  const snapshot = source.snapshot();
  const leader = snapshot.leader === undefined ? undefined : snapshot.nodes.get(snapshot.leader);
  const error = source.degradedError();
  return {
    id: source.me,
    leader: { id: snapshot.leader ?? '', address: leader?.address ?? '' },
    status: error === '' ? 'online' : 'degraded',
    degraded: error !== '',
    degraded_error: error,
    nodes: nodeViews(snapshot, source.now()),
  };
}
