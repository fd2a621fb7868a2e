import type { FastifyInstance } from 'fastify';
import type { SessionCollector } from '../session/index.js';
import type { WidgetParams, WidgetProcessDto } from './contract.js';

/** What the widget may tell about a process: nothing but these two facts. */
export interface WidgetProcessSource {
  /** The process's reference and how long it has run (0 unless running); 404 ApiError when unknown. */
  widgetFigures(id: string): { reference: string; uptimeSeconds: number };
}

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
  server.get<{ Params: WidgetParams }>(
    '/api/v3/widget/process/:id',
    { config: { public: true } },
    (request): WidgetProcessDto => {
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
