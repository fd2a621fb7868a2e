import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { GUARDED_ERRORS } from '../http/index.js';
import { consoleLine, parsePinoLine, rawEvent } from './log-event.js';
import type { LogBuffer } from './log-buffer.js';
import { maskEvent } from './mask-event.js';

const Query = Type.Object({ format: Type.Optional(Type.String()) });

/**
 * `GET /api/v3/log`: the recent server log lines, oldest first, as the reference's console strings,
 * or with `?format=raw` as objects. Any other format (an empty one too) is the console form, as in
 * the reference. Secrets are masked with the `secrets()` in force at the time of the request.
 */
export function registerLogRoutes(v3: FastifyInstance, buffer: LogBuffer, secrets: () => string[]): void {
  const schema = {
    summary: 'The recent lines of the server log (console form, or ?format=raw), secrets masked',
    tags: ['system'],
    security: [{ bearerAuth: [] }],
    querystring: Query,
    response: {
      200: Type.Union([Type.Array(Type.String()), Type.Array(Type.Record(Type.String(), Type.Unknown()))]),
      ...GUARDED_ERRORS,
    },
  };
  v3.get<{ Querystring: { format?: string } }>('/log', { schema }, (request, reply) => {
    const known = secrets();
    const events = buffer.lines().map((line) => maskEvent(parsePinoLine(line), known));
    const body = request.query.format === 'raw' ? events.map(rawEvent) : events.map(consoleLine);
    // Serialized here: the union schema would make fast-json-stringify guess per item.
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
}
