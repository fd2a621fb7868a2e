import type { FastifyInstance } from 'fastify';
import { ApiError } from '../http/index.js';
import type { MediaParamsDto, MediaQueryDto } from './contract.js';
import type { BusEvent } from './event-bus.js';
import type { EventStreams } from './event-streams.js';

export interface MediaSources {
  /** The names there now, by source: `rtmp`, `srt` (paths being published), `disk`, `mem` (files). */
  lists: Readonly<Record<string, () => Promise<string[]>>>;
  /** A glob's matcher (the storage's: `*` within a segment, `**` across); throws on a bad pattern. */
  compileGlob: (pattern: string) => (name: string) => boolean;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  /** Between two full lists, ms (the reference: 30 s). */
  listEveryMs: number;
}

const INGEST = new Set(['rtmp', 'srt']);

/**
 * `POST /api/v3/events/media/{type}` in the reference's shape: the names a source holds as one
 * `{"action":"list","names":[…]}`, again every `listEveryMs`, and in between each change as
 * `{"action":"create"|"remove","name":…}` (a publisher that starts or stops; a file written or
 * deleted: streamcore does not tell a new file from an overwritten one, both are `create`).
 */
export function registerMediaRoute(v3: FastifyInstance, streams: EventStreams, sources: MediaSources): void {
  v3.post<{ Params: MediaParamsDto; Querystring: MediaQueryDto }>(
    '/events/media/:type',
    async (request, reply) => {
      const type = request.params.type;
      const list = sources.lists[type];
      if (list === undefined) {
        throw new ApiError(
          'NOT_FOUND',
          `no media source "${type}"; there are ${Object.keys(sources.lists).join(', ')}`,
        );
      }
      const matches = compileOrThrow(sources, request.query.glob ?? '');
      const listLine = async (): Promise<string> =>
        JSON.stringify({ action: 'list', names: (await list()).filter(matches), ts: sources.now() });
      const first = await listLine();
      const client = streams.start(request, reply, {
        accepts: (event) => {
          const name = mediaChange(event, type);
          return name !== undefined && matches(name.name);
        },
        render: (event) => JSON.stringify({ ...mediaChange(event, type), ts: event.ts }),
        keepaliveLine: '{"action":"keepalive"}',
        jsonOnly: true,
      });
      client.send(first);
      const timer = setInterval(() => {
        void listLine().then(
          (line) => client.send(line),
          () => undefined,
        );
      }, sources.listEveryMs);
      reply.raw.once('close', () => clearInterval(timer));
    },
  );
}

/** The reference's media change an event is for source `type`, if it is one. */
function mediaChange(event: BusEvent, type: string): { action: string; name: string } | undefined {
  const { fields } = event;
  const path = typeof fields.path === 'string' ? fields.path : '';
  if (INGEST.has(type)) {
    if (event.type !== 'media' || fields.protocol !== type) return undefined;
    if (event.event === 'publish') return { action: 'create', name: path };
    if (event.event === 'unpublish') return { action: 'remove', name: path };
    return undefined;
  }
  if (event.type !== 'filesystem' || fields.filesystem !== type) return undefined;
  return { action: event.event === 'delete' ? 'remove' : 'create', name: path };
}

function compileOrThrow(sources: MediaSources, pattern: string): (name: string) => boolean {
  if (pattern === '') return () => true;
  try {
    return sources.compileGlob(pattern);
  } catch (error) {
    throw new ApiError('BAD_REQUEST', `glob: not a valid pattern (${(error as Error).message})`);
  }
}
