import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>;
type Validate = ((data: unknown, dataContext?: unknown) => unknown) & { errors?: unknown };
type Serialize = (data: unknown) => string;
/** What fastify passes a compiler for one schema of one route (lib/validation.js). */
interface RouteSchema {
  schema: unknown;
  method?: string;
  url?: string;
}
type Compiler<T> = (route: RouteSchema) => T;
/** A compilers factory: the shared schemas (`addSchema`) and the server's options for the compiler. */
type Factory<T> = (externalSchemas: unknown, options: unknown) => Compiler<T>;

/**
 * fastify's own schema compilers (Ajv for requests, fast-json-stringify for answers), but each
 * route's schema is compiled on the route's first use instead of while the server starts.
 *
 * Compiling every schema'd route up front was about a quarter of the start-up CPU (issue 11,
 * docs/performance.md#start-up-issue-11); most routes are never called in a given run. The compiled
 * functions are the ones fastify would have made, so answers and error details do not change.
 * What moves: a schema that cannot be compiled fails its route's first request (a 500) instead
 * of the start, and the first request of a route pays for its compile (a few milliseconds).
 *
 * fastify treats any `compilersFactory` as a custom compiler; the one thing that changes for a
 * custom compiler is that a `headers` schema's property names are not lower-cased for it. None of
 * our routes has a headers schema.
 */
export function lazySchemaCompilers(): CompilersFactory {
  // The packages' types give the compiled argument as the bare schema; at run time fastify passes,
  // and the compilers read, the route's definition (`{ schema, method, url, ... }`).
  const buildValidator = AjvCompiler() as unknown as Factory<Validate>;
  const buildSerializer = SerializerSelector() as unknown as Factory<Serialize>;
  const lazy: { buildValidator: Factory<Validate>; buildSerializer: Factory<Serialize> } = {
    buildValidator: (externalSchemas, options) => {
      // The Ajv instance too (with every shared schema added) is only made when a route needs it.
      let compiler: Compiler<Validate> | undefined;
      return (route) =>
        validateOnFirstUse(() => (compiler ??= buildValidator(externalSchemas, options))(route));
    },
    buildSerializer: (externalSchemas, options) => {
      let compiler: Compiler<Serialize> | undefined;
      return (route) =>
        serializeOnFirstUse(() => (compiler ??= buildSerializer(externalSchemas, options))(route));
    },
  };
  return lazy as unknown as CompilersFactory;
}

/**
 * Stands in for an Ajv validate function: fastify passes the parent data to a function that has
 * `schemaEnv` (Ajv's, so that it may coerce a root value) and reads `errors` after a failed call.
 */
function validateOnFirstUse(compile: () => Validate): Validate {
  let validate: Validate | undefined;
  const lazy = (data: unknown, dataContext?: unknown): unknown => {
    validate ??= compile();
    return validate(data, dataContext);
  };
  Object.defineProperty(lazy, 'errors', { get: () => validate?.errors });
  Object.defineProperty(lazy, 'schemaEnv', { value: true });
  return lazy;
}

function serializeOnFirstUse(compile: () => Serialize): Serialize {
  let serialize: Serialize | undefined;
  return (data) => (serialize ??= compile())(data);
}
