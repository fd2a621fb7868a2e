import { Type, type Static } from 'typebox';
import { empty, errors, GUARDED, JSON_BODY, opaque, type RouteDoc } from '../http/index.js';
import { ProcessConfigBody } from '../process/index.js';
import { ClusterNode, ClusterNodeStateBody } from './contract.js';
import { guarded, OK } from './guarded-route-doc.js';
import { KV_DOCS } from './kv-contract.js';
import { UNSUPPORTED_DOCS } from './unsupported-routes.js';

/**
 * The reference's `/api/v3/cluster/*` routes beyond the process aliases and the drain
 * (docs/cluster.md#the-references-cluster-routes): the nodes, the store (etcd) as read, the
 * files across nodes; with the key-value store and locks (kv-contract.ts) and the routes
 * answered 501 (unsupported-routes.ts).
 */

const NodeParams = Type.Object({ id: Type.String() });
const NodeStorageParams = Type.Object({ id: Type.String(), storage: Type.String() });
const NodeFileParams = Type.Object({ id: Type.String(), storage: Type.String(), '*': Type.String() });
const StorageParams = Type.Object({ storage: Type.String() });
const IdParams = Type.Object({ id: Type.String() });

/** `glob`, `sort` and `order` as for `GET /api/v3/fs/:name`. */
export const FileListQuery = Type.Object({
  glob: Type.Optional(Type.String()),
  sort: Type.Optional(
    Type.Union([
      Type.Literal('none'),
      Type.Literal('name'),
      Type.Literal('size'),
      Type.Literal('lastmod'),
      Type.Literal(''),
    ]),
  ),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc'), Type.Literal('')])),
});
export type FileListQueryDto = Static<typeof FileListQuery>;

/** A file as `GET /api/v3/fs/:name` lists it, with the node that has it (the reference's `core_id`). */
const ClusterFileInfo = Type.Object(
  {
    name: Type.String(),
    size_bytes: Type.Integer(),
    last_modified: Type.Integer({ description: 'seconds since the epoch' }),
    core_id: Type.String(),
  },
  { title: 'ClusterFileInfo', additionalProperties: true },
);
export type ClusterFileInfoDto = Static<typeof ClusterFileInfo>;

/** The reference's `ClusterNodeFiles`: a node's files by filesystem name. */
const ClusterNodeFiles = Type.Object(
  {
    last_update: Type.Integer({ description: 'when the node was asked, seconds since the epoch' }),
    files: Type.Record(Type.String(), Type.Array(Type.String())),
  },
  { title: 'ClusterNodeFiles' },
);
export type ClusterNodeFilesDto = Static<typeof ClusterNodeFiles>;

/** The reference's `AboutVersion`, as the node's `GET /api` answers it. */
const NodeVersion = Type.Object(
  {
    number: Type.String(),
    repository_commit: Type.String(),
    repository_branch: Type.String(),
    build_date: Type.String(),
    arch: Type.String(),
    compiler: Type.String(),
  },
  { title: 'ClusterNodeVersion' },
);

/** A process as etcd holds it (the reference's `api.Process` of its store: no state, no report). */
const StoredProcess = Type.Object(
  {
    id: Type.String(),
    owner: Type.String(),
    domain: Type.String(),
    type: Type.Literal('ffmpeg'),
    reference: Type.String(),
    created_at: Type.Integer({ description: 'seconds since the epoch' }),
    updated_at: Type.Integer({ description: 'seconds since the epoch' }),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: 'the process config as `GET /api/v3/process/:id/config` answers it',
    }),
    metadata: Type.Record(Type.String(), Type.Unknown()),
  },
  { title: 'ClusterStoredProcess' },
);
export type StoredProcessDto = Static<typeof StoredProcess>;

const ProcessNodeMap = Type.Record(Type.String(), Type.String(), {
  title: 'ClusterProcessMap',
  description: 'process id → node id',
});

const StoreNode = Type.Object(
  { id: Type.String(), state: Type.String(), updated_at: Type.String({ description: 'RFC 3339' }) },
  { title: 'ClusterStoreNode' },
);
export type StoreNodeDto = Static<typeof StoreNode>;

const IMPLEMENTED_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/cluster/healthy': guarded({
    summary: 'Whether this node reads etcd and the cluster has a leader',
    responses: { 200: Type.Boolean(), ...errors(...GUARDED) },
  }),
  'GET /api/v3/cluster/node': guarded({
    summary: 'The nodes of the cluster',
    responses: { 200: Type.Array(ClusterNode), ...errors(...GUARDED) },
  }),
  'GET /api/v3/cluster/node/:id': guarded({
    summary: 'One node',
    params: NodeParams,
    responses: { 200: ClusterNode, ...errors(...GUARDED, 404) },
  }),
  'GET /api/v3/cluster/node/:id/state': guarded({
    summary: 'Whether a node is drained (`maintenance`) or not (`online`)',
    params: NodeParams,
    responses: { 200: ClusterNodeStateBody, ...errors(...GUARDED, 404) },
  }),
  'GET /api/v3/cluster/node/:id/version': guarded({
    summary: "The version a node's API answers (its `GET /api`)",
    params: NodeParams,
    responses: { 200: NodeVersion, ...errors(...GUARDED, 404, 503) },
  }),
  'GET /api/v3/cluster/node/:id/process': guarded({
    summary: 'The processes a node runs (the query of `GET /api/v3/process`), each with `core_id`',
    params: NodeParams,
    responses: {
      200: Type.Array(Type.Record(Type.String(), Type.Unknown())),
      ...errors(...GUARDED, 400, 404, 503),
    },
  }),
  'GET /api/v3/cluster/node/:id/files': guarded({
    summary: "A node's files, by filesystem",
    params: NodeParams,
    responses: { 200: ClusterNodeFiles, ...errors(...GUARDED, 404, 503) },
  }),
  'GET /api/v3/cluster/node/:id/fs/:storage': guarded({
    summary: "The files of one of a node's filesystems (glob, sort, order as for `GET /api/v3/fs/:name`)",
    params: NodeStorageParams,
    querystring: FileListQuery,
    responses: { 200: Type.Array(ClusterFileInfo), ...errors(...GUARDED, 400, 404, 503) },
  }),
  'GET /api/v3/cluster/node/:id/fs/:storage/*': guarded({
    summary: "Reads a file of one of a node's filesystems (HEAD too)",
    params: NodeFileParams,
    produces: ['*/*'],
    responses: { 200: opaque('the file'), ...errors(...GUARDED, 404, 503) },
  }),
  'PUT /api/v3/cluster/node/:id/fs/:storage/*': guarded({
    summary: "Writes a file of one of a node's filesystems (the body as it is, the node's bounds)",
    params: NodeFileParams,
    consumes: ['*/*'],
    responses: {
      201: empty('created'),
      204: empty('overwritten'),
      ...errors(...GUARDED, 400, 404, 409, 413, 503, 507),
    },
  }),
  'DELETE /api/v3/cluster/node/:id/fs/:storage/*': guarded({
    summary: "Deletes a file of one of a node's filesystems",
    params: NodeFileParams,
    produces: ['text/plain'],
    responses: { 200: opaque('Deleted: <path>'), ...errors(...GUARDED, 404, 503) },
  }),
  'GET /api/v3/cluster/fs/:storage': guarded({
    summary: 'The files of a filesystem on every node, each with `core_id` (glob, sort, order)',
    params: StorageParams,
    querystring: FileListQuery,
    responses: { 200: Type.Array(ClusterFileInfo), ...errors(...GUARDED, 400) },
  }),
  'GET /api/v3/cluster/db/process': guarded({
    summary: 'The processes as etcd holds them',
    responses: { 200: Type.Array(StoredProcess), ...errors(...GUARDED) },
  }),
  'GET /api/v3/cluster/db/process/:id': guarded({
    summary: 'One process as etcd holds it',
    params: IdParams,
    responses: { 200: StoredProcess, ...errors(...GUARDED, 404) },
  }),
  'GET /api/v3/cluster/db/map/process': guarded({
    summary: 'Which node each process is assigned to',
    responses: { 200: ProcessNodeMap, ...errors(...GUARDED) },
  }),
  'GET /api/v3/cluster/db/map/reallocate': guarded({
    summary: 'The processes a drain is moving, and the node each moves to',
    responses: { 200: ProcessNodeMap, ...errors(...GUARDED) },
  }),
  'GET /api/v3/cluster/db/node': guarded({
    summary: 'The registered nodes and their state as etcd holds it',
    responses: { 200: Type.Array(StoreNode), ...errors(...GUARDED) },
  }),
  'POST /api/v3/cluster/process/probe': guarded({
    summary:
      'Probes the inputs of a process config on node `coreid` (default: the answering node), without creating it',
    querystring: Type.Object({ coreid: Type.Optional(Type.String()) }),
    body: ProcessConfigBody,
    responses: {
      200: Type.Object({ streams: Type.Array(Type.Unknown()), log: Type.Array(Type.String()) }),
      ...errors(...GUARDED, ...JSON_BODY, 404, 429, 503),
    },
  }),
  'PUT /api/v3/cluster/transfer/:id': guarded({
    summary: 'Makes another node the leader',
    params: NodeParams,
    responses: { 200: OK, ...errors(...GUARDED, 404, 409, 503) },
  }),
};

export const CLUSTER_API_DOCS: Record<string, RouteDoc> = {
  ...IMPLEMENTED_DOCS,
  ...KV_DOCS,
  ...UNSUPPORTED_DOCS,
};
