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

export interface MountOptions {
  disk: MountedFilesystem;
  mem: MountedFilesystem;
  /** The basic-auth check of writes into memfs; undefined when `storage.memory.auth.enable` is off. */
  memGate: BasicAuthGate | undefined;
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
 * The HTTP mounts (docs/storage.md#the-contract): memfs at `/memfs/` (GET/HEAD without auth; PUT/POST/DELETE with
 * basic auth) and the disk at `/` for everything no other route claims (GET/HEAD only).
 * Registered in their own scope so the raw-body parser does not leak into the JSON API.
 */
export async function registerMounts(server: FastifyInstance, options: MountOptions): Promise<void> {
  await server.register((scope, _options, done) => {
    passBodiesAsStreams(scope);

    const { mem, hooks } = options;
    const gate = options.memGate;
    installExpectContinue(
      server.server,
      (request) =>
        request.method !== 'GET' &&
        request.url?.startsWith('/memfs/') === true &&
        gate !== undefined &&
        !gate.accepts(request.headers.authorization, memfsPathOf(request.url)),
    );
    scope.route({
      method: ['GET', 'HEAD'],
      url: '/memfs/*',
      exposeHeadRoute: false,
      handler: (request, reply) => serveFromMount(request, reply, mem, '/memfs', hooks),
    });
    scope.route({
      method: ['PUT', 'POST', 'DELETE'],
      url: '/memfs/*',
      preParsing: limitInflatedBody(options.inflatedLimitBytes, 'api.max_body_kbytes'),
      onRequest: async (request) => {
        // Throws the 401 or 429 that the error handler answers.
        await gate?.admit(request, memfsPathOf(request.url));
      },
      handler: (request, reply) =>
        request.method === 'DELETE'
          ? deleteFromMount(request, reply, mem, '/memfs', hooks)
          : writeToMount(request, reply, mem, '/memfs', hooks),
    });
    scope.route({
      method: ['GET', 'HEAD'],
      url: '/*',
      exposeHeadRoute: false,
      // Not a route for 405 purposes: a POST to a disk path is "no such route", not "wrong method".
      config: { allowHeader: false },
      handler: (request, reply) => {
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

/** The URL's path without the query. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The memfs path a `/memfs/…` request URL names; undefined when it names none. */
function memfsPathOf(url: string): string | undefined {
  return decodeFilePath(pathOf(url).slice('/memfs'.length));
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
