import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, RequestCheck } from '../http/index.js';
import {
  FileListQuery,
  type ClusterFileInfoDto,
  type ClusterNodeFilesDto,
  type FileListQueryDto,
} from './api-contract.js';
import type { ClusterNodeDto, ClusterNodeStateDto } from './contract.js';
import { nodeViews } from './node-view.js';
import { askPeer, jsonOf, nodeAddress, passOn, queryOf, unknownNode, type PeerDeps } from './peer-request.js';

const listQuery = new RequestCheck(FileListQuery, 'query');

/** What the node routes read. */
export interface NodeRouteSource extends PeerDeps {
  /** Why the picture may be outdated ('' when it is fresh). */
  degradedError: () => string;
  /** Wall clock, ms. */
  now: () => number;
}

type NodeRequest = FastifyRequest<{ Params: { id: string } }>;
type FileRequest = FastifyRequest<{ Params: { id: string; storage: string; '*': string } }>;

/**
 * The reference's `/api/v3/cluster/node*`, `/cluster/healthy` and `/cluster/fs/:storage`
 * (docs/cluster.md#the-references-cluster-routes): the nodes from the picture of the cluster, and
 * what a node has (processes, files, version) asked of that node with the client's credentials.
 */
export function registerNodeRoutes(v3: FastifyInstance, source: NodeRouteSource): void {
  v3.get('/cluster/healthy', (): boolean => {
    return source.degradedError() === '' && source.snapshot().leader !== undefined;
  });

  v3.get('/cluster/node', (): ClusterNodeDto[] => nodeViews(source.snapshot(), source.now()));

  v3.get('/cluster/node/:id', (request: NodeRequest): ClusterNodeDto => {
    const node = nodeViews(source.snapshot(), source.now()).find((view) => view.id === request.params.id);
    if (node === undefined) throw unknownNode(request.params.id);
    return node;
  });

  v3.get('/cluster/node/:id/state', (request: NodeRequest): ClusterNodeStateDto => {
    const { id } = request.params;
    const snapshot = source.snapshot();
    if (!snapshot.nodes.has(id) && !snapshot.nodeStates.has(id)) throw unknownNode(id);
    return { state: snapshot.nodeStates.get(id) ?? 'online' };
  });

  v3.get('/cluster/node/:id/version', async (request: NodeRequest) => {
    const address = nodeAddress(source, request.params.id);
    const about = await jsonOf<{ version?: Record<string, unknown> }>(
      await askPeer(source, request, address, '/api'),
    );
    const version = about.version ?? {};
    const text = (key: string): string => (typeof version[key] === 'string' ? version[key] : '');
    return {
      number: text('number'),
      repository_commit: text('repository_commit'),
      repository_branch: text('repository_branch'),
      build_date: text('build_date'),
      arch: text('arch'),
      compiler: text('compiler'),
    };
  });

  v3.get('/cluster/node/:id/process', async (request: NodeRequest) => {
    const { id } = request.params;
    const answer = await askPeer(
      source,
      request,
      nodeAddress(source, id),
      `/api/v3/process${queryOf(request)}`,
    );
    const list = await jsonOf<Record<string, unknown>[]>(answer);
    return list.map((process) => ({ ...process, core_id: id }));
  });

  v3.get('/cluster/node/:id/files', async (request: NodeRequest): Promise<ClusterNodeFilesDto> => {
    const address = nodeAddress(source, request.params.id);
    const mounts = await jsonOf<{ name: string }[]>(await askPeer(source, request, address, '/api/v3/fs'));
    const files: Record<string, string[]> = {};
    await Promise.all(
      mounts.map(async ({ name }) => {
        const list = await jsonOf<{ name: string }[]>(
          await askPeer(source, request, address, `/api/v3/fs/${segment('storage', name)}`),
        );
        files[name] = list.map((file) => file.name).sort();
      }),
    );
    return { last_update: Math.floor(source.now() / 1000), files };
  });

  v3.get('/cluster/node/:id/fs/:storage', async (request: FileRequest) => {
    const { id, storage } = request.params;
    return sortFiles(await listOf(source, request, id, storage), readListQuery(request.query));
  });

  v3.get('/cluster/node/:id/fs/:storage/*', async (request: FileRequest, reply) => {
    const method = request.method === 'HEAD' ? 'HEAD' : 'GET';
    return passOn(
      reply,
      await askPeer(source, request, nodeAddress(source, request.params.id), filePath(request), { method }),
    );
  });

  v3.delete('/cluster/node/:id/fs/:storage/*', async (request: FileRequest, reply) => {
    return passOn(
      reply,
      await askPeer(source, request, nodeAddress(source, request.params.id), filePath(request), {
        method: 'DELETE',
      }),
    );
  });

  // An upload reaches the node as it arrives, of any content type (the node bounds its size).
  v3.register((uploads, _options, done) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser('*', (_request, payload, parsed) => parsed(null, payload));
    uploads.put('/cluster/node/:id/fs/:storage/*', async (request: FileRequest, reply) => {
      const stream = request.body instanceof Readable ? request.body : Readable.from([]);
      const address = nodeAddress(source, request.params.id);
      return passOn(
        reply,
        await askPeer(source, request, address, filePath(request), { method: 'PUT', stream }),
      );
    });
    done();
  });

  v3.get('/cluster/fs/:storage', async (request: FastifyRequest<{ Params: { storage: string } }>) => {
    const query = readListQuery(request.query);
    const ids = new Set([source.me, ...source.snapshot().nodes.keys()]);
    // A node that does not answer, or has no such filesystem, adds nothing (as the reference).
    const lists = await Promise.all(
      [...ids].map((id) => listOf(source, request, id, request.params.storage).catch(() => [])),
    );
    return sortFiles(lists.flat(), query);
  });
}

function readListQuery(query: unknown): FileListQueryDto {
  const read = listQuery.read(query);
  if (read.value === undefined)
    throw new ApiError('BAD_REQUEST', read.problems, { message: 'Invalid query' });
  return read.value;
}

/** The files of `storage` on node `id` matching the request's `glob`, each with `core_id`. */
async function listOf(
  source: NodeRouteSource,
  request: FastifyRequest,
  id: string,
  storage: string,
): Promise<ClusterFileInfoDto[]> {
  const glob = (request.query as { glob?: unknown }).glob;
  const path = `/api/v3/fs/${segment('storage', storage)}${typeof glob === 'string' && glob !== '' ? `?glob=${encodeURIComponent(glob)}` : ''}`;
  const list = await jsonOf<Omit<ClusterFileInfoDto, 'core_id'>[]>(
    await askPeer(source, request, nodeAddress(source, id), path),
  );
  return list.map((file) => ({ ...file, core_id: id }));
}

/** The reference's order: by name or size, else by modification time; ascending unless `desc`. */
function sortFiles(files: ClusterFileInfoDto[], query: FileListQueryDto): ClusterFileInfoDto[] {
  const sign = query.order === 'desc' ? -1 : 1;
  const key =
    query.sort === 'name'
      ? (a: ClusterFileInfoDto, b: ClusterFileInfoDto) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
      : query.sort === 'size'
        ? (a: ClusterFileInfoDto, b: ClusterFileInfoDto) => a.size_bytes - b.size_bytes
        : (a: ClusterFileInfoDto, b: ClusterFileInfoDto) => a.last_modified - b.last_modified;
  return files.sort((a, b) => sign * key(a, b));
}

/** The node's own file route for the requested file, each part of the path encoded again. */
function filePath(request: FileRequest): string {
  const { storage } = request.params;
  const path = request.params['*']
    .split('/')
    .map((part) => segment('path', part))
    .join('/');
  return `/api/v3/fs/${segment('storage', storage)}/${path}`;
}

/**
 * One path segment for the node's URL, encoded; `.` and `..` are refused, since the URL would
 * resolve them and ask another route of the node than the client asked for.
 */
function segment(field: string, part: string): string {
  if (part === '.' || part === '..')
    throw new ApiError('BAD_REQUEST', `${field}: must not contain "." or ".." segments`, {
      message: 'Invalid path',
    });
  return encodeURIComponent(part);
}
