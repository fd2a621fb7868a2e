import swagger from '@fastify/swagger';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { ErrorEnvelope, type RouteDoc } from './route-doc.js';

/** Where the document is served (the second is where the reference serves its Swagger document). */
export const DOCUMENT_PATHS = ['/api/v3/openapi.json', '/api/swagger/doc.json'] as const;
/** Swagger UI's own files; they are the page, not API routes, and carry no description. */
export const SWAGGER_UI_PREFIX = '/api/swagger';

/** What the domains declare for the document (collected in src/api-contracts.ts). */
export interface ApiContracts {
  /** The description of every route, by `METHOD url` (`routeKey`). */
  readonly docs: Readonly<Record<string, RouteDoc>>;
  /** Schemas with an `$id` the descriptions refer to by `$ref` (`ProcessConfig`, …). */
  readonly sharedSchemas: readonly TSchema[];
}

export interface ApiDescription {
  /** Routes registered without a description (`METHOD url`), for the test that forbids them. */
  readonly undocumented: string[];
  /** Every described route (`METHOD url`) with its description. */
  readonly described: ReadonlyMap<string, RouteDoc>;
  /** The shared schemas answers refer to by `$ref` (`ErrorEnvelope`, `ProcessConfig`, …). */
  readonly sharedSchemas: readonly TSchema[];
}

/**
 * Describes every route from the contracts' `docs` as it is registered, and serves the OpenAPI 3.1 document built
 * from those descriptions (by @fastify/swagger). Call before any route is added.
 *
 * The table's schemas describe; fastify does not enforce them. A request is checked against its
 * contract's schema by the domain that reads it (`RequestCheck`, request-check.ts; the process
 * config in process/config/process-config.ts), not by fastify before the route: the v16 answers
 * name the missing process (404) before a bad body (400), and a missing body apart from a `null`
 * one, while fastify validates before the handler and hands its validator `null` for both.
 * Answers are serialized with JSON.stringify as before (fastify's schema serializer would drop
 * undeclared fields). A route registered with schemas of its own (including its answers) is
 * described by them and validated by fastify as usual. The tests check every answer against the
 * schemas (test/helpers/answer-check.ts).
 */
export async function installApiDescription(
  server: FastifyInstance,
  { docs, sharedSchemas }: ApiContracts,
  version: string,
): Promise<ApiDescription> {
  const undocumented: string[] = [];
  const described = new Map<string, RouteDoc>();
  const shared = [ErrorEnvelope, ...sharedSchemas];
  for (const schema of shared) server.addSchema(schema);

  server.addHook('onRoute', (route) => {
    const key = routeKey(route);
    // HEAD twins of GET routes carry their GET's description (the document leaves them out).
    const doc = docs[key ?? `GET ${route.url}`];
    if (doc === undefined) {
      if (key !== undefined) describeOwn(key, route);
      return;
    }
    if (key !== undefined) described.set(key, doc);
    // Described here, checked by the domain against the same schema (see above), and answers
    // serialized as before.
    route.validatorCompiler = () => () => true;
    route.serializerCompiler = () => (data) => JSON.stringify(data);
    route.schema = {
      summary: doc.summary,
      tags: doc.tags,
      security: doc.security,
      ...(doc.params === undefined ? {} : { params: doc.params }),
      ...(doc.querystring === undefined ? {} : { querystring: doc.querystring }),
      ...(doc.body === undefined ? {} : { body: doc.body }),
      ...(doc.consumes === undefined ? {} : { consumes: doc.consumes }),
      ...(doc.produces === undefined ? {} : { produces: doc.produces }),
      response: doc.responses,
    };
  });

  /** A route not in the table: described by schemas of its own (with its answers), or not at all. */
  function describeOwn(key: string, route: RouteOptions): void {
    const own = route.schema as OwnSchema | undefined;
    // A description needs its one-line summary as much as its answers.
    if (own?.response !== undefined && own.summary !== undefined) {
      described.set(key, {
        summary: own.summary ?? '',
        tags: own.tags ?? [],
        security: own.security ?? [],
        responses: own.response,
      });
    } else if (!isSwaggerUiFile(route.url)) {
      undocumented.push(key);
    }
  }

  await server.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'streamcore API',
        version,
        description:
          'The HTTP API of streamcore, wire-compatible with the datarhei Core v16 API for what it implements. ' +
          'Log in with POST /api/login and send the access token as `Authorization: Bearer <token>`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'access token from POST /api/login',
          },
          providerToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: "an identity provider's access token",
          },
          memfsBasic: { type: 'http', scheme: 'basic', description: 'storage.memory.auth credentials' },
          scrapeBearer: { type: 'http', scheme: 'bearer', description: 'metrics.prometheus.bearer_token' },
          scrapeBasic: { type: 'http', scheme: 'basic', description: 'metrics.prometheus basic auth' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
  return { undocumented, described, sharedSchemas: shared };
}

/** The parts of a route's own schema its description is read from. */
interface OwnSchema {
  summary?: string;
  tags?: string[];
  security?: RouteDoc['security'];
  response?: RouteDoc['responses'];
}

/** `GET /x`, `PUT,POST,DELETE /memfs/*`: the methods without HEAD; undefined for a HEAD-only route. */
export function routeKey(route: Pick<RouteOptions, 'method' | 'url'>): string | undefined {
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter(
    (method) => method !== 'HEAD',
  );
  return methods.length === 0 ? undefined : `${methods.join(',')} ${route.url}`;
}

/** Swagger UI's page and static files (src/http/swagger-ui.ts, not API routes). */
export function isSwaggerUiFile(url: string): boolean {
  return url === SWAGGER_UI_PREFIX || url.startsWith(`${SWAGGER_UI_PREFIX}/`);
}
