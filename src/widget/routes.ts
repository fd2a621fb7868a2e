import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ErrorSchema } from '../http/index.js';
import type { SessionCollector } from '../session/index.js';

/** What the widget may tell about a process: nothing but these two facts. */
export interface WidgetProcessSource {
  /** The process's reference and how long it has run (0 unless running); 404 ApiError when unknown. */
  widgetFigures(id: string): { reference: string; uptimeSeconds: number };
}

export const WidgetProcessSchema = Type.Object(
  {
    current_sessions: Type.Integer({ description: 'HLS viewers now, of playlists under the reference' }),
    total_sessions: Type.Integer({ description: 'closed HLS viewer sessions so far, same playlists' }),
    uptime: Type.Integer({ description: 'seconds the process has been running; 0 when it is not' }),
  },
  { title: 'WidgetProcess', additionalProperties: false },
);

/**
 * `GET /api/v3/widget/process/:id`, answered without a token as the reference does: the Restreamer
 * UI's player site is a public web page that shows a channel's viewers and uptime from it. It
 * tells only the counts and the uptime (no address, no command, no metadata). HLS sessions count
 * when their reference (the playlist's name) starts with the process's reference, as in the
 * reference; the total is of closed sessions.
 */
export function registerWidgetRoutes(
  server: FastifyInstance,
  source: WidgetProcessSource,
  hls: SessionCollector,
): void {
  server.get<{ Params: { id: string } }>(
    '/api/v3/widget/process/:id',
    {
      config: { public: true },
      schema: {
        summary: "A process's public figures for the player site: HLS viewers and uptime (no token)",
        tags: ['widget'],
        security: [],
        params: Type.Object({ id: Type.String() }),
        response: { 200: WidgetProcessSchema, 404: ErrorSchema, 500: ErrorSchema },
      },
    },
    (request) => {
      const { reference, uptimeSeconds } = source.widgetFigures(request.params.id);
      let current = 0;
      for (const session of hls.activeSessions()) if (session.reference.startsWith(reference)) current += 1;
      let total = 0;
      for (const entry of hls.history.list())
        if (entry.reference.startsWith(reference)) total += entry.sessions;
      return { current_sessions: current, total_sessions: total, uptime: uptimeSeconds };
    },
  );
}
