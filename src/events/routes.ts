import type { FastifyInstance } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { ApiError, RequestCheck } from '../http/index.js';
import {
  EventsBody,
  ProcessEventsBody,
  type EventsBodyDto,
  type ProcessEventsBodyDto,
  type WebhookStateDto,
} from './contract.js';
import { compileFilters, FilterError, type EventFilterSpec, type EventPredicate } from './event-filter.js';
import { lastSeqOf, type EventStreams } from './event-streams.js';

const eventsBody = new RequestCheck(EventsBody);
const processEventsBody = new RequestCheck(ProcessEventsBody);

/**
 * `POST /api/v3/events` (every kind), `/events/log` (log lines) and `/events/process` (process
 * events, with the reference's process filter), and `GET /api/v3/events/webhooks`.
 */
export function registerEventRoutes(
  v3: FastifyInstance,
  streams: EventStreams,
  webhookStates: () => WebhookStateDto[],
): void {
  v3.post<{ Body: EventsBodyDto | undefined }>('/events', (request, reply) => {
    const body = readBody(eventsBody, request.body);
    const accepts = compileOrThrow(body.filters ?? []);
    streams.start(request, reply, { accepts, lastSeq: lastSeqOf(request, body.last_seq) });
  });
  v3.post<{ Body: EventsBodyDto | undefined }>('/events/log', (request, reply) => {
    const body = readBody(eventsBody, request.body);
    const accepts = compileOrThrow(
      (body.filters ?? []).map((filter) => ({ ...filter, type: 'log' })),
      'log',
    );
    streams.start(request, reply, { accepts, lastSeq: lastSeqOf(request, body.last_seq) });
  });
  v3.post<{ Body: ProcessEventsBodyDto | undefined }>('/events/process', (request, reply) => {
    const body = readBody(processEventsBody, request.body);
    // The reference's process filter in the terms of the general one: `pid` is the id, `type` what
    // happened; `domain` is not read (streamcore's processes have none).
    const filters = (body.filters ?? []).map((filter): EventFilterSpec => ({
      type: 'process',
      core_id: filter.core_id,
      data: {
        ...(filter.pid === undefined || filter.pid === '' ? {} : { id: filter.pid }),
        ...(filter.type === undefined || filter.type === '' ? {} : { event: filter.type }),
      },
    }));
    const accepts = compileOrThrow(filters, 'process');
    streams.start(request, reply, { accepts, lastSeq: lastSeqOf(request, body.last_seq) });
  });
  v3.get('/events/webhooks', (_request, reply) => reply.send(webhookStates()));
}

function readBody<Schema extends TSchema>(check: RequestCheck<Schema>, body: unknown): Static<Schema> {
  const read = check.read(body ?? {});
  if (read.value === undefined) {
    throw new ApiError('BAD_REQUEST', read.problems, { message: 'Invalid event filters' });
  }
  return read.value;
}

/** The filters' predicate; `onlyType` limits it to one kind even without filters. */
function compileOrThrow(filters: EventFilterSpec[], onlyType?: string): EventPredicate {
  try {
    const accepts = compileFilters(filters);
    return onlyType === undefined ? accepts : (event) => event.type === onlyType && accepts(event);
  } catch (error) {
    if (error instanceof FilterError)
      throw new ApiError('BAD_REQUEST', error.message, { message: 'Invalid event filters' });
    throw error;
  }
}
