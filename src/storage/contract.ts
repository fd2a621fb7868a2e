import { Type } from 'typebox';
import { BEARER, empty, errors, GUARDED, opaque, PUBLIC, type RouteDoc } from '../http/index.js';

const FileInfo = Type.Object(
  {
    name: Type.String(),
    size_bytes: Type.Integer(),
    last_modified: Type.Integer({ description: 'unix seconds' }),
  },
  { title: 'FileInfo' },
);

const file = opaque('the file (content type from its extension); byte ranges with Range');
/** What a write (PUT, POST) or delete (DELETE) of one file answers, on every filesystem. */
const fileChanged = {
  200: opaque('Deleted: <path> (DELETE)'),
  201: empty('created'),
  204: empty('overwritten'),
};
const FilePath = Type.Object({ '*': Type.String({ description: 'the file path' }) });
const NamedFilePath = Type.Object({ name: Type.String(), '*': Type.String() });

const LIST_QUERY = Type.Object({
  glob: Type.Optional(Type.String()),
  sort: Type.Optional(
    Type.Union([Type.Literal('name'), Type.Literal('size'), Type.Literal('lastmod'), Type.Literal('')]),
  ),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc'), Type.Literal('')])),
});

function fsDocs(base: string): Record<string, RouteDoc> {
  const params = FilePath;
  const tags = ['filesystem'];
  return {
    [`GET ${base}`]: {
      summary: 'List the files of a filesystem',
      tags,
      security: BEARER,
      querystring: LIST_QUERY,
      responses: { 200: Type.Array(FileInfo), ...errors(...GUARDED, 400, 404) },
    },
    [`GET ${base}/*`]: {
      summary: 'Read one file',
      tags,
      security: BEARER,
      params,
      produces: ['*/*'],
      responses: { 200: file, 206: file, 304: empty('not modified'), ...errors(...GUARDED, 404, 416) },
    },
    [`PUT ${base}/*`]: {
      summary: 'Write one file (the body is its content)',
      tags,
      security: BEARER,
      params,
      consumes: ['*/*'],
      responses: {
        201: empty('created'),
        204: empty('overwritten'),
        ...errors(...GUARDED, 400, 404, 409, 413, 507),
      },
    },
    [`DELETE ${base}/*`]: {
      summary: 'Delete one file',
      tags,
      security: BEARER,
      params,
      produces: ['text/plain'],
      responses: { 200: opaque('Deleted: <path>'), ...errors(...GUARDED, 404) },
    },
  };
}

export const STORAGE_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/fs': {
    summary: 'The filesystems and where they are mounted',
    tags: ['filesystem'],
    security: BEARER,
    responses: {
      200: Type.Array(Type.Object({ name: Type.String(), type: Type.String(), mount: Type.String() })),
      ...errors(...GUARDED),
    },
  },
  ...fsDocs('/api/v3/fs/disk'),
  ...fsDocs('/api/v3/fs/mem'),
  'GET /api/v3/fs/:name': {
    summary:
      'List the files of an S3 filesystem by its name (glob, sort, order as for disk); 404 for an unknown name',
    tags: ['filesystem'],
    security: BEARER,
    params: Type.Object({ name: Type.String() }),
    querystring: LIST_QUERY,
    responses: { 200: Type.Array(FileInfo), ...errors(...GUARDED, 400, 404, 502, 504) },
  },
  'GET /api/v3/fs/:name/*': {
    summary: 'Read a file of an S3 filesystem by its name (HEAD too); 404 for an unknown name',
    tags: ['filesystem'],
    security: BEARER,
    params: NamedFilePath,
    produces: ['*/*'],
    responses: {
      200: file,
      206: file,
      304: empty('not modified'),
      ...errors(...GUARDED, 404, 416, 502, 504),
    },
  },
  'PUT,DELETE /api/v3/fs/:name/*': {
    summary: 'Write (PUT) or delete (DELETE) a file of an S3 filesystem by its name; 404 for an unknown name',
    tags: ['filesystem'],
    security: BEARER,
    params: NamedFilePath,
    consumes: ['*/*'],
    responses: {
      ...fileChanged,
      ...errors(...GUARDED, 400, 404, 409, 413, 502, 504, 507),
    },
  },
  'GET /memfs/*': {
    summary: 'Read a file of the memory filesystem (HLS viewers are counted as sessions)',
    tags: ['mounts'],
    security: PUBLIC,
    params: FilePath,
    produces: ['*/*'],
    responses: { 200: file, 206: file, 304: empty('not modified'), ...errors(403, 404, 416, 509) },
  },
  'PUT,POST,DELETE /memfs/*': {
    summary: 'Store (PUT, POST) or delete (DELETE) a file of the memory filesystem',
    tags: ['mounts'],
    security: [{ memfsBasic: [] }],
    params: FilePath,
    consumes: ['*/*'],
    responses: {
      ...fileChanged,
      ...errors(400, 401, 403, 404, 409, 413, 415, 429, 507),
    },
  },
  'GET /*': {
    summary:
      'Read a file of an S3 filesystem under its mountpoint, or else of the disk filesystem (a directory serves its index.html) or of a directory `router.*` serves in its place (`/ui/`, `/path/*` routes; 301 for their redirects); 401 for unknown /api/v3 paths without a token',
    tags: ['mounts'],
    security: PUBLIC,
    params: FilePath,
    produces: ['*/*'],
    responses: {
      200: file,
      206: file,
      301: empty('Location: a redirect of router.routes, or a directory prefix with its slash'),
      304: empty('not modified'),
      ...errors(401, 403, 404, 416, 502, 504, 509),
    },
  },
  'PUT,POST,DELETE /*': {
    summary:
      'Store (PUT, POST) or delete (DELETE) a file of an S3 filesystem under its mountpoint (basic auth where its auth is on); 404 elsewhere',
    tags: ['mounts'],
    security: [{ memfsBasic: [] }],
    params: FilePath,
    consumes: ['*/*'],
    responses: {
      ...fileChanged,
      ...errors(400, 401, 403, 404, 409, 413, 415, 429, 502, 504, 507),
    },
  },
};
