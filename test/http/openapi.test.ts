import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startServer, type TestServer } from '../helpers/server.js';
import { authConfig, rawRequest } from '../auth/support.js';

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<string, { summary?: string; security?: unknown[]; responses?: Record<string, unknown> }>
  >;
  components: { securitySchemes: Record<string, unknown> };
}

/** The document's path for a fastify route url: `/:id` → `/{id}`, `*` → `{*}`. */
function documentPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}').replace(/\*$/, '{*}');
}

/** The API description (issue 15): generated from the routes, complete, valid, public. */
describe('OpenAPI document', () => {
  let server: TestServer;
  let document: OpenApiDocument;

  before(async () => {
    // Every optional part on, so every route is registered.
    server = await startServer({
      config: {
        ...authConfig(),
        metrics: { enable: true, enable_prometheus: true },
      },
    });
    const answer = await rawRequest(`${server.url}/api/v3/openapi.json`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(answer.status, 200, 'served without authentication');
    assert.equal(answer.headers['content-encoding'], 'gzip');
    document = JSON.parse(gunzipSync(answer.body).toString('utf8')) as OpenApiDocument;
  });
  after(() => server.close());

  it('describes every registered route', () => {
    assert.deepEqual(server.app.description.undocumented, [], 'routes registered without a description');
    for (const [key, doc] of server.app.description.described) {
      const [methods, url] = key.split(' ') as [string, string];
      const path = document.paths[documentPath(url)];
      assert.ok(path, `${url} is in the document`);
      for (const method of methods.split(',')) {
        const operation: OpenApiDocument['paths'][string][string] | undefined = path[method.toLowerCase()];
        assert.ok(operation, `${method} ${url} is in the document`);
        assert.equal(operation.summary, doc.summary);
        const statuses: string[] = Object.keys(operation.responses ?? {});
        assert.deepEqual(
          statuses.sort(),
          Object.keys(doc.responses).sort(),
          `${method} ${url}: every answer`,
        );
        assert.ok(statuses.includes('500'), `${method} ${url} describes its 500`);
      }
    }
  });

  it('names the security schemes and uses them on the guarded routes', () => {
    assert.deepEqual(Object.keys(document.components.securitySchemes).sort(), [
      'bearerAuth',
      'memfsBasic',
      'providerToken',
      'scrapeBasic',
      'scrapeBearer',
    ]);
    assert.deepEqual(document.paths['/api/v3/process']?.get?.security, [{ bearerAuth: [] }]);
    assert.deepEqual(document.paths['/memfs/{*}']?.put?.security, [{ memfsBasic: [] }]);
    assert.deepEqual(document.paths['/ping']?.get?.security, []);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(document.openapi, '3.1.0');
    const result = await new Validator().validate(
      document as unknown as Parameters<Validator['validate']>[0],
    );
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });

  it('is served at the reference path too, the same document', async () => {
    const other = await rawRequest(`${server.url}/api/swagger/doc.json`);
    assert.equal(other.status, 200);
    assert.deepEqual(JSON.parse(other.text), document);
  });

  it('serves Swagger UI from this server only', async () => {
    const page = await rawRequest(`${server.url}/api/swagger/`);
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(sources.length > 0);
    for (const source of sources) assert.doesNotMatch(source, /^(https?:)?\/\//, `${source} is local`);
    for (const source of sources) {
      const asset = await rawRequest(new URL(source, `${server.url}/api/swagger/`).href);
      assert.equal(asset.status, 200, source);
    }
  });

  it('still guards the rest of /api/v3', async () => {
    const answer = await rawRequest(`${server.url}/api/v3/process`);
    assert.equal(answer.status, 401);
    const lookalike = await rawRequest(`${server.url}/api/v3/openapi.json/x`);
    assert.equal(lookalike.status, 401);
  });
});
