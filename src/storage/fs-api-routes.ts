import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, limitInflatedBody } from '../http/index.js';
import type { FileInfo } from './filesystem.js';
import type { MountHooks } from './mount-hooks.js';
import type { MountedFilesystem } from './mounted-filesystem.js';
import { answerUpload, fileNotFound } from './mount-routes.js';
import { passBodiesAsStreams } from './upload-body.js';
import { decodeFilePath } from './path.js';
import { serveFile } from './serve-file.js';

export interface FsApiOptions {
  filesystems: readonly MountedFilesystem[];
  /** Bound on an upload's decoded size when it came compressed, bytes (`api.max_body_kbytes`). */
  inflatedLimitBytes: number;
  hooks: readonly MountHooks[];
}

/** One entry of `GET /api/v3/fs/:name` (datarhei Core v16 `api.FileInfo`): `last_modified` in Unix seconds. */
interface FileInfoDto {
  name: string;
  size_bytes: number;
  last_modified: number;
}

const SORTS = ['name', 'size', 'lastmod'] as const;
const ORDERS = ['asc', 'desc'] as const;

/**
 * `/api/v3/fs` (docs/storage.md#the-contract): list the filesystems, list the files of one (glob, sort, order), and
 * read, write and delete one file. Registered inside the guarded `/api/v3` scope, in a child scope
 * of its own for the raw-body parser.
 */
export async function registerFsApiRoutes(v3: FastifyInstance, options: FsApiOptions): Promise<void> {
  await v3.register((scope, _options, done) => {
    passBodiesAsStreams(scope);

    scope.get('/fs', () =>
      options.filesystems.map((fs) => ({ name: fs.name, type: fs.type, mount: fs.mount })),
    );

    // disk and mem have routes of their own; the S3 filesystems (named by the config) are served
    // by the `:name` routes, whose description covers them.
    const [builtIn, named] = partition(options.filesystems, (fs) => fs.type !== 's3');
    for (const filesystem of builtIn) {
      const base = `/fs/${filesystem.name}`;
      scope.get(base, (request) => listFiles(filesystem, request));
      scope.get(`${base}/*`, (request, reply) => readOne(filesystem, base, request, reply));
      const uploadOptions = {
        preParsing: limitInflatedBody(options.inflatedLimitBytes, 'api.max_body_kbytes'),
      };
      scope.put(`${base}/*`, uploadOptions, (request, reply) =>
        writeOne(filesystem, base, request, reply, options.hooks),
      );
      scope.delete(`${base}/*`, (request, reply) =>
        deleteOne(filesystem, base, request, reply, options.hooks),
      );
    }
    const byName = new Map(named.map((fs) => [fs.name, fs]));
    const filesystemOf = (request: FastifyRequest): MountedFilesystem => {
      const { name } = request.params as { name: string };
      const filesystem = byName.get(name);
      if (filesystem === undefined) {
        throw new ApiError('NOT_FOUND', `unknown filesystem "${name}"`, { message: 'Filesystem not found' });
      }
      return filesystem;
    };
    scope.get('/fs/:name', (request) => listFiles(filesystemOf(request), request));
    scope.get('/fs/:name/*', (request, reply) => {
      const filesystem = filesystemOf(request);
      return readOne(filesystem, `/fs/${filesystem.name}`, request, reply);
    });
    scope.route({
      method: ['PUT', 'DELETE'],
      url: '/fs/:name/*',
      preParsing: limitInflatedBody(options.inflatedLimitBytes, 'api.max_body_kbytes'),
      handler: (request, reply) => {
        const filesystem = filesystemOf(request);
        const base = `/fs/${filesystem.name}`;
        return request.method === 'PUT'
          ? writeOne(filesystem, base, request, reply, options.hooks)
          : deleteOne(filesystem, base, request, reply, options.hooks);
      },
    });
    done();
  });
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

async function listFiles(filesystem: MountedFilesystem, request: FastifyRequest): Promise<FileInfoDto[]> {
  const query = request.query as Record<string, string | string[] | undefined>;
  const glob = single(query, 'glob') ?? '';
  const sort = single(query, 'sort') ?? 'none';
  const order = single(query, 'order') ?? 'asc';
  if (sort !== 'none' && !(SORTS as readonly string[]).includes(sort)) {
    throw new ApiError('BAD_REQUEST', `sort: must be one of ${SORTS.join(', ')}, got "${sort}"`);
  }
  if (!(ORDERS as readonly string[]).includes(order)) {
    throw new ApiError('BAD_REQUEST', `order: must be one of ${ORDERS.join(', ')}, got "${order}"`);
  }
  const files = await filesystem.list(glob);
  files.sort(comparatorFor(sort));
  if (order === 'desc') files.reverse();
  return files.map((file) => ({
    name: file.name,
    size_bytes: file.size_bytes,
    last_modified: Math.floor(file.last_modified_ms / 1000),
  }));
}

/** Sort by name, size, or (the default, as the reference server does) last modification. */
function comparatorFor(sort: string): (a: FileInfo, b: FileInfo) => number {
  if (sort === 'name') return (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  if (sort === 'size') return (a, b) => a.size_bytes - b.size_bytes || (a.name < b.name ? -1 : 1);
  return (a, b) => a.last_modified_ms - b.last_modified_ms || (a.name < b.name ? -1 : 1);
}

function single(query: Record<string, string | string[] | undefined>, key: string): string | undefined {
  const value = query[key];
  if (Array.isArray(value)) throw new ApiError('BAD_REQUEST', `${key}: must be given once`);
  // An empty value means the default: core-client-go sends `?glob=&sort=&order=` when unset.
  return value === '' ? undefined : value;
}

function filePathOf(request: FastifyRequest, base: string): string {
  const url = request.url;
  const query = url.indexOf('?');
  const rawPath = (query === -1 ? url : url.slice(0, query)).slice(`/api/v3${base}`.length);
  const path = decodeFilePath(rawPath);
  if (path === undefined || path === '/') throw fileNotFound(rawPath);
  return path;
}

async function readOne(
  filesystem: MountedFilesystem,
  base: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const path = filePathOf(request, base);
  const file = await filesystem.open(path);
  if (file === undefined) throw fileNotFound(path);
  // No session hooks: reads through the API are administration, not viewing.
  return serveFile(
    reply,
    { request, reply, filesystem, path: file.info.name, urlPath: request.url, file },
    [],
  );
}

async function writeOne(
  filesystem: MountedFilesystem,
  base: string,
  request: FastifyRequest,
  reply: FastifyReply,
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  const path = filePathOf(request, base);
  const urlPath = (filesystem.mount === '/' ? '' : filesystem.mount) + path;
  const contentLocation = request.url.split('?')[0] ?? '';
  return answerUpload(request, reply, filesystem, { path, urlPath, contentLocation }, hooks);
}

async function deleteOne(
  filesystem: MountedFilesystem,
  base: string,
  request: FastifyRequest,
  reply: FastifyReply,
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  const path = filePathOf(request, base);
  if (!(await filesystem.remove(path))) throw fileNotFound(path);
  const urlPath = (filesystem.mount === '/' ? '' : filesystem.mount) + path;
  for (const hook of hooks) hook.afterDelete?.({ request, reply, filesystem, path, urlPath, bytes: 0 });
  return reply.type('text/plain; charset=utf-8').send(`Deleted: ${path}`);
}
