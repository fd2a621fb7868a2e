import type { FastifyInstance } from 'fastify';
import type { LogQueryDto } from './contract.js';
import { consoleLine, parsePinoLine, rawEvent } from './log-event.js';
import type { LogBuffer } from './log-buffer.js';
import { maskEvent } from './mask-event.js';

/**
 * `GET /api/v3/log`: the recent server log lines, oldest first, as the reference's console strings,
 * or with `?format=raw` as objects. Any other format (an empty one too) is the console form, as in
 * the reference. Secrets are masked with the `secrets()` in force at the time of the request.
 */
export function registerLogRoutes(v3: FastifyInstance, buffer: LogBuffer, secrets: () => string[]): void {
  v3.get<{ Querystring: LogQueryDto }>('/log', (request, reply) => {
    const known = secrets();
    const events = buffer.lines().map((line) => maskEvent(parsePinoLine(line), known));
    const body = request.query.format === 'raw' ? events.map(rawEvent) : events.map(consoleLine);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
}
