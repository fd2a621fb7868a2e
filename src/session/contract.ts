import { Type, type Static } from 'typebox';
import { BEARER, errors, GUARDED, type RouteDoc } from '../http/index.js';

/**
 * The wire shapes of `/api/v3/session` (datarhei Core v16 `api.Session`, `api.SessionSummary`),
 * declared once: session-dto.ts fills the types derived from them, the routes are described by
 * them. The reference reports traffic in whole MiB (`traffic_*_mb`); we add exact
 * `traffic_*_bytes`.
 */

export const Session = Type.Object(
  {
    id: Type.String(),
    reference: Type.String(),
    created_at: Type.Integer({ description: 'Unix seconds' }),
    local: Type.String(),
    remote: Type.String(),
    extra: Type.Record(Type.String(), Type.Unknown()),
    bytes_rx: Type.Integer(),
    bytes_tx: Type.Integer(),
    bandwidth_rx_kbit: Type.Number(),
    bandwidth_tx_kbit: Type.Number(),
  },
  { $id: 'Session', title: 'Session' },
);
export type SessionDto = Static<typeof Session>;

const Stats = {
  sessions: Type.Integer(),
  traffic_rx_mb: Type.Integer(),
  traffic_tx_mb: Type.Integer(),
  traffic_rx_bytes: Type.Integer(),
  traffic_tx_bytes: Type.Integer(),
};
const SessionStats = Type.Object(Stats);
export type SessionStatsDto = Static<typeof SessionStats>;

export const SessionSummary = Type.Object(
  {
    active: Type.Object({
      list: Type.Array(Type.Ref('Session')),
      sessions: Type.Integer(),
      bandwidth_rx_mbit: Type.Number(),
      bandwidth_tx_mbit: Type.Number(),
      max_sessions: Type.Integer(),
      max_bandwidth_rx_mbit: Type.Number(),
      max_bandwidth_tx_mbit: Type.Number(),
    }),
    summary: Type.Object(
      {
        ...Stats,
        remote: Type.Record(
          Type.String(),
          Type.Object({ ...Stats, local: Type.Record(Type.String(), SessionStats) }),
        ),
        local: Type.Record(Type.String(), SessionStats),
        reference: Type.Record(Type.String(), SessionStats),
      },
      { additionalProperties: true },
    ),
  },
  { title: 'SessionSummary', additionalProperties: true },
);
/** The summary, its active list's `$ref` resolved to the session it names. */
export type SessionSummaryDto = Static<typeof SessionSummary, { Session: typeof Session }>;

const Collectors = Type.Object({
  collectors: Type.Optional(Type.String({ description: 'comma list of collectors (default: all)' })),
});

export const SESSION_SCHEMAS = [Session];

export const SESSION_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/session': {
    summary: 'Per collector: active sessions, totals, bandwidth, limits and the history',
    tags: ['session'],
    security: BEARER,
    querystring: Collectors,
    responses: { 200: Type.Record(Type.String(), SessionSummary), ...errors(...GUARDED, 400) },
  },
  'GET /api/v3/session/active': {
    summary: 'Per collector: the active sessions',
    tags: ['session'],
    security: BEARER,
    querystring: Collectors,
    responses: {
      200: Type.Record(Type.String(), Type.Array(Type.Ref('Session'))),
      ...errors(...GUARDED, 400),
    },
  },
};
