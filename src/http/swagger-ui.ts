import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { replyError } from './error-handler.js';
import { holdsVersion, strongEtag } from './etag.js';
import { ApiError } from './errors.js';

/**
 * Swagger UI at `/api/swagger/`, on the API description (`doc.json` beside it). The page's files
 * are Swagger UI's own, as the `@fastify/swagger-ui` package ships them; this module serves them
 * itself instead of registering that plugin, because registering it (its static-file server, a YAML
 * library and their routes) took 55–75 ms of every start's CPU (issue 11) for a page most runs
 * never open. Nothing here is read before the first request for the page.
 *
 * Nothing comes from another host: the page, its scripts and styles are this server's, and the
 * Content-Security-Policy says so (stricter than the plugin's, which allowed styles and fonts from
 * any https: host and upgraded requests to https, which breaks the page on a plain-HTTP LAN
 * address).
 */
export function registerSwaggerUi(server: FastifyInstance, prefix: string): void {
  const files = new SwaggerUiFiles();
  const page = { config: { public: true } } as const;
  // With and without the trailing slash, as the plugin did: the page's links are relative to it.
  server.get(prefix, page, (_request, reply) => sendPage(reply, `${prefix}/static`));
  server.get(`${prefix}/`, page, (_request, reply) => sendPage(reply, './static'));
  server.get(`${prefix}/static/index.html`, page, (_request, reply) => reply.redirect(`${prefix}/`));
  server.get(`${prefix}/static/swagger-initializer.js`, page, (_request, reply) =>
    withPolicy(reply).type('application/javascript; charset=utf-8').send(INITIALIZER),
  );
  server.get(`${prefix}/json`, page, (_request, reply) => reply.send(server.swagger()));
  server.get(`${prefix}/yaml`, page, (_request, reply) =>
    reply.type('application/x-yaml').send(server.swagger({ yaml: true })),
  );
  server.get<{ Params: { '*': string } }>(`${prefix}/static/*`, page, (request, reply) =>
    files.send(request, reply, request.params['*']),
  );
}

/** The page's HTML: Swagger UI's stylesheets and scripts, from `staticPath`. */
function sendPage(reply: FastifyReply, staticPath: string): FastifyReply {
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>streamcore API</title>
<link rel="stylesheet" type="text/css" href="${staticPath}/swagger-ui.css" />
<link rel="stylesheet" type="text/css" href="${staticPath}/index.css" />
<link rel="icon" type="image/png" href="${staticPath}/favicon-32x32.png" sizes="32x32" />
<link rel="icon" type="image/png" href="${staticPath}/favicon-16x16.png" sizes="16x16" />
</head>
<body>
<div id="swagger-ui"></div>
<script src="${staticPath}/swagger-ui-bundle.js" charset="UTF-8"></script>
<script src="${staticPath}/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
<script src="${staticPath}/swagger-initializer.js" charset="UTF-8"></script>
</body>
</html>
`;
  return withPolicy(reply).type('text/html; charset=utf-8').send(html);
}

/**
 * Starts Swagger UI on the description beside the page (`doc.json`, the reference's path), resolved
 * against the page's own address so that it works behind a path-rewriting proxy too.
 */
const INITIALIZER = `window.onload = function () {
  var base = window.location.href.split('#', 1)[0];
  if (base.charAt(base.length - 1) !== '/') base += '/';
  window.ui = SwaggerUIBundle({
    url: new URL('doc.json', base).href,
    oauth2RedirectUrl: new URL('static/oauth2-redirect.html', base).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    validatorUrl: null
  });
};
`;

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' data:",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  // Swagger UI injects a style element of its own; inline styles cannot run code.
  "style-src 'self' 'unsafe-inline'",
].join('; ');

function withPolicy(reply: FastifyReply): FastifyReply {
  return reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

interface StaticFile {
  body: Buffer;
  etag: string;
  contentType: string;
}

/**
 * Swagger UI's files, from the folder the package ships them in (flat: a request names a file of
 * that listing or gets a 404, so no path reaches outside it). Each file is read on its first
 * request and then kept (about 2.5 MB if every one is asked for).
 */
class SwaggerUiFiles {
  private folder: Promise<{ path: string; names: ReadonlySet<string> }> | undefined;
  private readonly loaded = new Map<string, Promise<StaticFile>>();

  async send(request: FastifyRequest, reply: FastifyReply, name: string): Promise<FastifyReply> {
    const folder = await (this.folder ??= listFolder());
    if (!folder.names.has(name)) {
      return replyError(reply, new ApiError('NOT_FOUND', `${request.url} is not a file of Swagger UI`));
    }
    let file = this.loaded.get(name);
    if (file === undefined) {
      file = loadFile(join(folder.path, name));
      this.loaded.set(name, file);
      file.catch(() => this.loaded.delete(name));
    }
    const { body, etag, contentType } = await file;
    withPolicy(reply).header('etag', etag).header('cache-control', 'public, max-age=0');
    if (holdsVersion(request, etag)) return reply.code(304).send();
    return reply.type(contentType).send(body);
  }
}

async function listFolder(): Promise<{ path: string; names: ReadonlySet<string> }> {
  const path = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static');
  const entries = await readdir(path, { withFileTypes: true });
  return { path, names: new Set(entries.filter((entry) => entry.isFile()).map((entry) => entry.name)) };
}

async function loadFile(path: string): Promise<StaticFile> {
  const body = await readFile(path);
  return {
    body,
    etag: strongEtag(body),
    contentType: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream',
  };
}
