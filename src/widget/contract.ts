import { Type, type Static } from 'typebox';
import { errors, PUBLIC, type RouteDoc } from '../http/index.js';

/** What the widget tells about a process: nothing but these figures. */
const WidgetProcess = Type.Object(
  {
    current_sessions: Type.Integer({ description: 'HLS viewers now, of playlists under the reference' }),
    total_sessions: Type.Integer({ description: 'closed HLS viewer sessions so far, same playlists' }),
    uptime: Type.Integer({ description: 'seconds the process has been running; 0 when it is not' }),
  },
  { title: 'WidgetProcess', additionalProperties: false },
);
export type WidgetProcessDto = Static<typeof WidgetProcess>;

const IdParams = Type.Object({ id: Type.String() });
export type WidgetParams = Static<typeof IdParams>;

/** The widget route, public as in the reference, described for the API document. */
export const WIDGET_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/widget/process/:id': {
    summary: "A process's public figures for the player site: HLS viewers and uptime (no token)",
    tags: ['widget'],
    security: PUBLIC,
    params: IdParams,
    responses: { 200: WidgetProcess, ...errors(404) },
  },
};
