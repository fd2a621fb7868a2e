import { Type, type Static } from 'typebox';
import { PROCESS_ALIAS_DOCS } from './process-aliases.js';
import { BEARER, errors, GUARDED, JSON_BODY, PUBLIC, type RouteDoc } from '../http/index.js';

/** A node's resources as it last registered them (the reference's `ClusterNodeResources`, without GPUs). */
const ClusterNodeResources = Type.Object(
  {
    is_throttling: Type.Boolean({ description: 'always false: streamcore does not throttle a node' }),
    ncpu: Type.Number({ description: 'logical CPUs' }),
    cpu_used: Type.Number({ description: 'CPU in use, percent of one CPU times ncpu (0–100·ncpu)' }),
    cpu_limit: Type.Number({ description: 'CPU the node may use, 100·ncpu' }),
    memory_used_bytes: Type.Integer(),
    memory_limit_bytes: Type.Integer({ description: "the machine's memory" }),
    memory_total_bytes: Type.Integer(),
    error: Type.String(),
    encoders: Type.Integer({ description: 'encoders running on the node now' }),
    processes: Type.Integer({ description: 'processes the cluster placed on the node' }),
    max_processes: Type.Integer({ description: "the node's ffmpeg.max_processes; 0: no limit" }),
  },
  { title: 'ClusterNodeResources' },
);

/** The node's API as the answering node sees it (the reference's `ClusterNodeCore`). */
const ClusterNodeCore = Type.Object(
  {
    address: Type.String(),
    status: Type.String({ description: '`online`: registered in etcd' }),
    error: Type.String(),
    last_contact_ms: Type.Number(),
    latency_ms: Type.Number({ description: 'always 0: not measured' }),
    version: Type.String(),
  },
  { title: 'ClusterNodeCore' },
);

/** A node (the reference's `ClusterNode`; `voter` is always true, every node may lead). */
export const ClusterNode = Type.Object(
  {
    id: Type.String(),
    name: Type.String({ description: 'the node id' }),
    version: Type.String({ description: 'the v16 API version the node answers' }),
    address: Type.String({ description: "base URL of the node's API" }),
    status: Type.String({ description: '`online` or `maintenance` (drained)' }),
    error: Type.String(),
    voter: Type.Boolean(),
    leader: Type.Boolean(),
    created_at: Type.String({ description: 'when the node joined, RFC 3339' }),
    uptime_seconds: Type.Integer(),
    last_contact_ms: Type.Number({ description: 'ms since the node last renewed its registration' }),
    latency_ms: Type.Number({ description: 'always 0: not measured' }),
    core: ClusterNodeCore,
    resources: ClusterNodeResources,
  },
  { title: 'ClusterNode' },
);

/** `GET /api/v3/cluster`: the reference's `ClusterAbout`, with the fields that apply to an etcd cluster. */
const ClusterAbout = Type.Object(
  {
    id: Type.String({ description: "the answering node's id" }),
    leader: Type.Object({ id: Type.String(), address: Type.String() }),
    status: Type.String({ description: '`online`, or `degraded` while etcd cannot be read' }),
    degraded: Type.Boolean(),
    degraded_error: Type.String(),
    nodes: Type.Array(ClusterNode),
  },
  { title: 'ClusterAbout' },
);
export type ClusterAboutDto = Static<typeof ClusterAbout>;
export type ClusterNodeDto = Static<typeof ClusterNode>;

export const ClusterNodeStateBody = Type.Object(
  { state: Type.Union([Type.Literal('online'), Type.Literal('maintenance')]) },
  { title: 'ClusterNodeState' },
);
export type ClusterNodeStateDto = Static<typeof ClusterNodeStateBody>;

const NodeParams = Type.Object({ id: Type.String() });

/** What a node answers a peer that cannot reach etcd (docs/cluster.md#when-etcd-is-in-trouble). */
const EtcdProbeAnswer = Type.Object(
  { etcd: Type.Union([Type.Literal('reachable'), Type.Literal('unreachable')]) },
  { title: 'ClusterEtcdProbe' },
);
export type EtcdProbeAnswerDto = Static<typeof EtcdProbeAnswer>;
export type NodeParamsDto = Static<typeof NodeParams>;

export const CLUSTER_DOCS: Record<string, RouteDoc> = {
  ...PROCESS_ALIAS_DOCS,
  'GET /cluster/etcd-probe': {
    summary: 'Whether this node reaches etcd now (asked by the other nodes of the cluster; no token)',
    tags: ['cluster'],
    security: PUBLIC,
    responses: { 200: EtcdProbeAnswer, ...errors() },
  },
  'GET /api/v3/cluster': {
    summary: 'The cluster: its nodes, their state and resources, and the leader',
    tags: ['cluster'],
    security: BEARER,
    responses: { 200: ClusterAbout, ...errors(...GUARDED, 404) },
  },
  'PUT /api/v3/cluster/node/:id/state': {
    summary: 'Drains a node (`maintenance`: its processes move away, none are placed on it) or undrains it',
    tags: ['cluster'],
    security: BEARER,
    params: NodeParams,
    body: ClusterNodeStateBody,
    responses: { 200: ClusterNodeStateBody, ...errors(...GUARDED, ...JSON_BODY, 404, 503) },
  },
};
