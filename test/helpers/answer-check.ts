import { gunzipSync } from 'node:zlib';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { API_CONTRACTS } from '../../src/api-contracts.js';
import { ErrorEnvelope, isSwaggerUiFile } from '../../src/http/openapi/index.js';

/** One answer that did not match the API description. */
export interface AnswerMismatch {
  request: string;
  status: number;
  problem: string;
}

/**
 * Checks every answer a test server gives against the API description of its route (the OpenAPI
 * document is built from the same schemas): the status must be described, and a JSON body must
 * match the schema of that status. An answer that does not is recorded (the test server's `close`
 * fails with the list) and turned into a 500, so the test that received it fails where it happened.
 */
export class AnswerCheck {
  readonly mismatches: AnswerMismatch[] = [];
  private readonly ajv: Ajv;
  private readonly compiled = new WeakMap<object, ValidateFunction>();
  private readonly envelope: ValidateFunction;

  constructor() {
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    for (const schema of API_CONTRACTS.sharedSchemas) this.ajv.addSchema(schema);
    this.ajv.addSchema(ErrorEnvelope);
    this.envelope = this.ajv.getSchema('ErrorEnvelope')!;
  }

  readonly hook: onSendHookHandler = (request, reply, payload, done) => {
    const problem = this.problemOf(request, reply, payload);
    if (problem === undefined) {
      done(null, payload);
      return;
    }
    const mismatch = { request: `${request.method} ${request.url}`, status: reply.statusCode, problem };
    this.mismatches.push(mismatch);
    reply
      .code(500)
      .removeHeader('content-encoding')
      .removeHeader('content-length')
      .type('application/json; charset=utf-8');
    done(
      null,
      JSON.stringify({
        code: 500,
        message: 'Answer does not match the API description',
        details: [JSON.stringify(mismatch)],
      }),
    );
  };

  private problemOf(request: FastifyRequest, reply: FastifyReply, payload: unknown): string | undefined {
    const status = reply.statusCode;
    const responses = (request.routeOptions.schema as { response?: Record<string, object> } | undefined)
      ?.response;
    let schema: ValidateFunction | undefined;
    if (responses === undefined) {
      if (request.routeOptions.url !== undefined && isSwaggerUiFile(request.routeOptions.url))
        return undefined;
      // No route matched (404, 405) or a framework error before routing: the envelope.
      if (request.routeOptions.url !== undefined && status < 400)
        return `route ${request.routeOptions.url} is not described`;
      schema = this.envelope;
    } else {
      const described = responses[String(status)];
      if (described === undefined) return `status ${status} is not described for ${request.routeOptions.url}`;
      schema = this.compile(described);
    }
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('application/json')) return undefined;
    // A route that serves files (a disk file may well be JSON) describes its body as opaque.
    const produces = (request.routeOptions.schema as { produces?: string[] } | undefined)?.produces;
    if (produces !== undefined && !produces.some((media) => media.startsWith('application/json')))
      return undefined;
    const body = bodyText(payload, String(reply.getHeader('content-encoding') ?? ''));
    if (body === undefined || body === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return 'the body is not JSON';
    }
    if (schema(value)) return undefined;
    return this.ajv.errorsText(schema.errors, { dataVar: 'body' });
  }

  private compile(schema: object): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

/** The text of a payload as the hook sees it; undefined for a stream (a file being served). */
function bodyText(payload: unknown, encoding: string): string | undefined {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return (encoding === 'gzip' ? gunzipSync(payload) : payload).toString('utf8');
  return undefined;
}
