import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import type { SessionCollector } from './session-collector.js';
import type { SessionDto, SessionSummaryDto } from './contract.js';
import { toSessionDto, toSummaryDto } from './session-dto.js';

/**
 * `GET /api/v3/session` (summary per collector) and `GET /api/v3/session/active` (active sessions
 * per collector), both with `?collectors=a,b` (default: all). An unknown collector name is a 400.
 */
export function registerSessionRoutes(
  v3: FastifyInstance,
  collectors: readonly SessionCollector[],
  now: () => number,
): void {
  v3.get('/session', (request) => {
    const result: Record<string, SessionSummaryDto> = {};
    const nowMs = now();
    for (const collector of selected(request, collectors))
      result[collector.name] = toSummaryDto(collector, nowMs);
    return result;
  });
  v3.get('/session/active', (request) => {
    const result: Record<string, SessionDto[]> = {};
    const nowMs = now();
    for (const collector of selected(request, collectors)) {
      result[collector.name] = collector.activeSessions().map((session) => toSessionDto(session, nowMs));
    }
    return result;
  });
}

function selected(request: FastifyRequest, collectors: readonly SessionCollector[]): SessionCollector[] {
  const raw = (request.query as Record<string, string | string[] | undefined>).collectors;
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  if (value === undefined || value.trim() === '') return [...collectors];
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !collectors.some((collector) => collector.name === name));
  if (unknown.length > 0) {
    throw new ApiError(
      'BAD_REQUEST',
      `collectors: unknown ${unknown.map((name) => `"${name}"`).join(', ')}; known are ${collectors.map((c) => c.name).join(', ')}`,
    );
  }
  return collectors.filter((collector) => names.includes(collector.name));
}
