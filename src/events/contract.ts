import { Type, type Static } from 'typebox';
import { BEARER, errors, Given, GUARDED, JSON_BODY, opaque, type RouteDoc } from '../http/index.js';

/**
 * Fields a Go client (core-client-go) sends as `null` when it has none are `Given`: `null` is "none".
 *
 * The wire shapes of `/api/v3/events…` (datarhei Core's branch `vod`: `api.LogEventFilter`,
 * `api.ProcessEventFilter`, `api.MediaEvent`) and of the webhooks' delivery state, declared once.
 */

const Pattern = (what: string) =>
  Type.Optional(Type.String({ description: `${what}; a regular expression (RE2), case-insensitive` }));

export const EventFilter = Type.Object({
  type: Type.Optional(
    Type.String({ description: 'the kind: process, log, media, filesystem, session, config' }),
  ),
  event: Type.Optional(
    Type.String({
      description:
        'what happened (state, publish, …), for log lines their component; exact, case-insensitive',
    }),
  ),
  message: Pattern("a log line's message"),
  level: Pattern("a log line's level by name (error, warn, info, debug)"),
  caller: Pattern("a log line's caller"),
  core_id: Pattern("the core's id"),
  data: Given(
    Type.Record(Type.String(), Type.String(), {
      description:
        "per key of a log line's data, or field of the event (id, state, name, path…): a regular expression",
    }),
  ),
});
export type EventFilterDto = Static<typeof EventFilter>;

const LastSeq = Type.Optional(
  Type.Integer({
    minimum: 0,
    description:
      'the seq of the last event the client saw; what followed is sent first (as the Last-Event-ID header)',
  }),
);

export const EventsBody = Type.Object({
  filters: Given(Type.Array(EventFilter, { description: 'an event passes when it matches any one' })),
  last_seq: LastSeq,
});
export type EventsBodyDto = Static<typeof EventsBody>;

export const ProcessEventFilter = Type.Object({
  pid: Pattern('the process id'),
  domain: Pattern("not read: streamcore's processes have no domain"),
  type: Pattern('what happened: created, updated, deleted, state'),
  core_id: Pattern("the core's id"),
});

export const ProcessEventsBody = Type.Object({
  filters: Given(Type.Array(ProcessEventFilter)),
  last_seq: LastSeq,
});
export type ProcessEventsBodyDto = Static<typeof ProcessEventsBody>;

const MediaParams = Type.Object({
  type: Type.String({ description: 'rtmp, srt, or a filesystem: disk, mem' }),
});
const MediaQuery = Type.Object({
  glob: Type.Optional(Type.String({ description: 'only names matching this glob' })),
});
export type MediaParamsDto = Static<typeof MediaParams>;
export type MediaQueryDto = Static<typeof MediaQuery>;

export const WebhookState = Type.Object({
  url: Type.String({ description: 'user info masked' }),
  events: Type.Array(Type.String()),
  delivered: Type.Integer({ description: 'events delivered' }),
  queued: Type.Integer({ description: 'events waiting' }),
  dropped: Type.Integer({ description: 'events dropped: queue full, or retries exhausted' }),
  last_success: Type.Union([Type.Integer({ description: 'Unix milliseconds' }), Type.Null()]),
  last_error: Type.Union([
    Type.Object({ ts: Type.Integer({ description: 'Unix milliseconds' }), message: Type.String() }),
    Type.Null(),
  ]),
});
export type WebhookStateDto = Static<typeof WebhookState>;

const STREAM = ['text/event-stream', 'application/x-json-stream'];
const streamAnswer = opaque(
  'one event object per line (application/x-json-stream) or per SSE message (Accept: text/event-stream): seq, ts, type, event and the fields of its type (docs/events.md)',
);

function streamRoute(summary: string, body: typeof EventsBody | typeof ProcessEventsBody): RouteDoc {
  return {
    summary,
    tags: ['events'],
    security: BEARER,
    body,
    produces: STREAM,
    responses: { 200: streamAnswer, ...errors(...GUARDED, ...JSON_BODY) },
  };
}

/** The event routes, described for the API document. */
export const EVENTS_DOCS: Record<string, RouteDoc> = {
  'POST /api/v3/events': streamRoute('A stream of every kind of event, filtered by the body', EventsBody),
  'POST /api/v3/events/log': streamRoute("A stream of the server log's lines as events", EventsBody),
  'POST /api/v3/events/process': streamRoute('A stream of process events', ProcessEventsBody),
  'POST /api/v3/events/media/:type': {
    summary:
      "A stream of the names published on an ingest server or written on a filesystem (the reference's media events)",
    tags: ['events'],
    security: BEARER,
    params: MediaParams,
    querystring: MediaQuery,
    produces: ['application/x-json-stream'],
    responses: {
      200: opaque(
        '{"action":"list","names":[…],"ts":…} first and every 30 s, between them create and remove with name and ts',
      ),
      ...errors(...GUARDED, 400, 404),
    },
  },
  'GET /api/v3/events/webhooks': {
    summary: 'The delivery state of each configured webhook',
    tags: ['events'],
    security: BEARER,
    responses: { 200: Type.Array(WebhookState), ...errors(...GUARDED) },
  },
};
