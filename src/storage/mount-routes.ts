import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, limitInflatedBody } from '../http/index.js';
import type { BasicAuthGate } from './basic-auth-gate.js';
import { StorageError } from './errors.js';
import { installExpectContinue } from './expect-continue.js';
import type { MountHooks } from './mount-hooks.js';
import type { MountedFilesystem } from './mounted-filesystem.js';
import { decodeFilePath, pathLengthProblem } from './path.js';
import { serveFile } from './serve-file.js';
import { passBodiesAsStreams, uploadOf } from './upload-body.js';
import type { Upload, UploadResult } from './upload.js';

/** A mount that takes writes (memfs, the S3 filesystems), with the basic-auth check of its writes. */
export interface WritableMount {
  filesystem: MountedFilesystem;
  /** Undefined when writes need no credentials (`storage.memory.auth.enable` or the S3 entry's `auth.enable` off). */
  gate: BasicAuthGate | undefined;
}

export interface MountOptions {
  disk: MountedFilesystem;
  /** memfs at `/memfs`, then each S3 filesystem at its mountpoint. */
  writable: readonly WritableMount[];
  /** Bound on an upload's decoded size when it came compressed, bytes (`api.max_body_kbytes`). */
  inflatedLimitBytes: number;
  /** URL prefixes that belong to the API; the disk mount leaves them to the 404/405 handling. */
  reservedPrefixes: readonly string[];
  hooks: readonly MountHooks[];
  /** Asked in order before the disk serves a path; read per request, so they may be added later. */
  diskFallbacks: readonly DiskFallback[];
}

/**
 * Paths another module serves in the disk's place (the router's `/ui/` and `router.routes`): it
 * answers the GET or HEAD and resolves the reply, or resolves undefined to leave it to the disk.
 */
export type DiskFallback = (
  request: FastifyRequest,
  reply: FastifyReply,
  urlPath: string,
) => Promise<FastifyReply | undefined>;

/**
 * The HTTP mounts (docs/storage.md#the-contract): memfs at `/memfs/` and each S3 filesystem at its
 * mountpoint (GET/HEAD without auth; PUT/POST/DELETE with basic auth where it is on), and the disk
 * at `/` for everything no other route claims (GET/HEAD only). Registered in their own scope so
 * the raw-body parser does not leak into the JSON API.
 */
export async function registerMounts(server: FastifyInstance, options: MountOptions): Promise<void> {
  await server.register((scope, _options, done) => {
    passBodiesAsStreams(scope);

    const { hooks } = options;
    installExpectContinue(server.server, (request) => {
      if (request.method === 'GET') return false;
      const url = request.url ?? '';
      const mount = options.writable.find(({ filesystem }) => url.startsWith(`${filesystem.mount}/`));
      if (mount?.gate === undefined) return false;
      return !mount.gate.accepts(request.headers.authorization, grantPathOf(url, mount.filesystem.mount));
    });
    const [memfs, ...others] = options.writable;
    if (memfs !== undefined) {
      const { filesystem, gate } = memfs;
      scope.route({
        method: ['GET', 'HEAD'],
        url: '/memfs/*',
        exposeHeadRoute: false,
        handler: (request, reply) => serveFromMount(request, reply, filesystem, '/memfs', hooks),
      });
      scope.route({
        method: ['PUT', 'POST', 'DELETE'],
        url: '/memfs/*',
        preParsing: limitInflatedBody(options.inflatedLimitBytes, 'api.max_body_kbytes'),
        onRequest: async (request) => {
          // Throws the 401 or 429 that the error handler answers.
          await gate?.admit(request, grantPathOf(request.url, '/memfs'));
        },
        handler: (request, reply) => changeOnMount(request, reply, filesystem, '/memfs', hooks),
      });
    }
    // The S3 mountpoints come from the config, the routes (and their description) are fixed: they
    // are served by the catch-alls, which leave every other path as it was.
    const mountOf = (url: string): WritableMount | undefined => {
      const path = pathOf(url);
      return others.find(({ filesystem }) => path.startsWith(`${filesystem.mount}/`));
    };
    scope.route({
      method: ['PUT', 'POST', 'DELETE'],
      url: '/*',
      config: { allowHeader: false },
      preParsing: limitInflatedBody(options.inflatedLimitBytes, 'api.max_body_kbytes'),
      handler: async (request, reply) => {
        const mount = mountOf(request.url);
        if (mount === undefined) return reply.callNotFound();
        const prefix = mount.filesystem.mount;
        await mount.gate?.admit(request, grantPathOf(request.url, prefix));
        return changeOnMount(request, reply, mount.filesystem, prefix, hooks);
      },
    });
    scope.route({
      method: ['GET', 'HEAD'],
      url: '/*',
      exposeHeadRoute: false,
      // Not a route for 405 purposes: a POST to a disk path is "no such route", not "wrong method".
      config: { allowHeader: false },
      handler: (request, reply) => {
        const mount = mountOf(request.url);
        if (mount !== undefined) {
          return serveFromMount(request, reply, mount.filesystem, mount.filesystem.mount, hooks);
        }
        const urlPath = pathOf(request.url);
        if (
          options.reservedPrefixes.some((prefix) => urlPath === prefix || urlPath.startsWith(`${prefix}/`))
        ) {
          return reply.callNotFound();
        }
        return serveUnlessClaimed(request, reply, urlPath);
      },
    });
    done();
  });

  async function serveUnlessClaimed(
    request: FastifyRequest,
    reply: FastifyReply,
    urlPath: string,
  ): Promise<FastifyReply> {
    for (const claim of options.diskFallbacks) {
      const answered = await claim(request, reply, urlPath);
      if (answered !== undefined) return answered;
    }
    return serveFromMount(request, reply, options.disk, '', options.hooks);
  }
}

function changeOnMount(
  request: FastifyRequest,
  reply: FastifyReply,
  filesystem: MountedFilesystem,
  prefix: string,
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  return request.method === 'DELETE'
    ? deleteFromMount(request, reply, filesystem, prefix, hooks)
    : writeToMount(request, reply, filesystem, prefix, hooks);
}

/** The URL's path without the query. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * What a write grant is checked against: the URL path with the mount (`/memfs/live/a.ts`,
 * `/s3/live/a.ts`), normalized; undefined when the URL names no file of the mount.
 */
function grantPathOf(url: string, mount: string): string | undefined {
  const path = decodeFilePath(pathOf(url).slice(mount.length));
  return path === undefined ? undefined : mount + path;
}

/** The filesystem path of a request on a mount, or throws the mount's 404. */
function filePathOf(request: FastifyRequest, prefix: string): { path: string; urlPath: string } {
  const rawPath = pathOf(request.url).slice(prefix.length);
  const path = decodeFilePath(rawPath);
  if (path === undefined) throw fileNotFound(rawPath);
  return { path, urlPath: prefix + path };
}

export function fileNotFound(path: string): ApiError {
  return new ApiError('NOT_FOUND', path, { message: 'File not found' });
}

async function serveFromMount(
  request: FastifyRequest,
  reply: FastifyReply,
  filesystem: MountedFilesystem,
  prefix: string,
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  const { path } = filePathOf(request, prefix);
  const file = await filesystem.open(path);
  if (file === undefined) throw fileNotFound(path);
  return serveFile(
    reply,
    { request, reply, filesystem, path: file.info.name, urlPath: prefix + file.info.name, file },
    hooks,
  );
}

async function writeToMount(
  request: FastifyRequest,
  reply: FastifyReply,
  filesystem: MountedFilesystem,
  prefix: string,
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  const { path, urlPath } = filePathOf(request, prefix);
  return answerUpload(request, reply, filesystem, { path, urlPath, contentLocation: urlPath }, hooks);
}

/**
 * Stores the request's body at `target.path` and answers 201 (new) or 204 (replaced), after the
 * write hooks saw it.
 */
export async function answerUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  filesystem: MountedFilesystem,
  target: { path: string; urlPath: string; contentLocation: string },
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  const { path, urlPath } = target;
  const result = await writeFile(filesystem, path, uploadOf(request));
  const { bytes, data } = result;
  for (const hook of hooks) hook.afterWrite?.({ request, reply, filesystem, path, urlPath, bytes, data });
  void reply.header('content-location', target.contentLocation);
  return result.created ? reply.code(201).type('text/plain; charset=utf-8').send('') : reply.code(204).send();
}

async function deleteFromMount(
  request: FastifyRequest,
  reply: FastifyReply,
  filesystem: MountedFilesystem,
  prefix: string,
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  const { path, urlPath } = filePathOf(request, prefix);
  if (!(await filesystem.remove(path))) throw fileNotFound(path);
  for (const hook of hooks) hook.afterDelete?.({ request, reply, filesystem, path, urlPath, bytes: 0 });
  return reply.type('text/plain; charset=utf-8').send(`Deleted: ${path}`);
}

/** Writes through a filesystem, mapping its refusals to API errors (docs/storage.md#the-contract: 413, 507, 404; 409 below a file). */
async function writeFile(filesystem: MountedFilesystem, path: string, upload: Upload): Promise<UploadResult> {
  const tooLong = pathLengthProblem(path);
  if (tooLong !== undefined) throw new ApiError('BAD_REQUEST', tooLong);
  try {
    return await filesystem.upload(path, upload);
  } catch (error) {
    // The disk root's own length counts towards PATH_MAX too.
    if ((error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') {
      throw new ApiError('BAD_REQUEST', `path: too long for the filesystem (${path.length} characters)`);
    }
    if (!(error instanceof StorageError)) throw error;
    if (error.code === 'TOO_LARGE') throw new ApiError('PAYLOAD_TOO_LARGE', error.message);
    if (error.code === 'NO_SPACE') throw new ApiError('INSUFFICIENT_STORAGE', error.message);
    if (error.code === 'NOT_A_DIRECTORY') throw new ApiError('CONFLICT', error.message);
    throw fileNotFound(path);
  }
}
