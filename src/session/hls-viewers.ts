import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import type { MountHooks, ServeEvent, ServeOverride } from '../storage/index.js';
import type { IpIgnoreList } from './ip-ignorelist.js';
import {
  addQueryParam,
  handOffMasterPlaylist,
  isMasterPlaylist,
  playlistSegments,
  resolvePlaylistUri,
  rewritePlaylistUris,
} from './playlist.js';
import { referenceOf } from './reference.js';
import type { Session, SessionCollector } from './session-collector.js';
import { isValidSessionId, newSessionId } from './session-id.js';
import type { TrafficMeter } from './traffic-meter.js';

/** Declared bandwidth of the hand-off master when the stream's cannot be measured yet, bit/s. */
const DEFAULT_BANDWIDTH = 1_000_000;
/** How many of the newest segments the bandwidth estimate looks at. */
const ESTIMATE_SEGMENTS = 3;
const SESSION_PARAM = 'session';

/**
 * HLS viewer sessions (collector `hls`, docs/sessions.md#the-contract), on every mount:
 * - a playlist requested without `?session=` opens a pending session and is answered with a
 *   master playlist that points to the same playlist with the new id (a real master playlist is
 *   answered with its variant URIs carrying the id); limits apply here (509), but a pending
 *   session holds no slot of `sessions.max_sessions`;
 * - a playlist requested with the id keeps the session alive and is answered with its URIs
 *   carrying the id, so the player's segment requests name the session;
 * - a segment requested with the id makes the session active, unless the active ones fill the
 *   slots (509);
 * - every request that names a session counts its bytes to it.
 * A malformed id is a 403 on GET and HEAD. HEAD requests otherwise get the files as they are, and
 * so do clients on the ignore list, without sessions.
 */
export class HlsViewerSessions implements MountHooks {
  constructor(
    private readonly collector: SessionCollector,
    private readonly meter: TrafficMeter,
    private readonly ignoreList: IpIgnoreList,
  ) {}

  async beforeServe(event: ServeEvent): Promise<ServeOverride | undefined> {
    const { request, reply } = event;
    if (this.ignoreList.ignores(request.ip)) return undefined;
    const id = sessionParam(request);
    // Malformed ids are refused on GET and HEAD alike (docs/sessions.md#the-contract).
    if (id !== undefined && !isValidSessionId(id)) {
      throw new ApiError('FORBIDDEN', `${SESSION_PARAM}: malformed session id`);
    }
    // A HEAD transfers no playlist or segment: it opens, keeps and counts no session.
    if (request.method !== 'GET') return undefined;
    if (!event.urlPath.toLowerCase().endsWith('.m3u8')) {
      const session = id === undefined ? undefined : this.collector.get(id);
      // A segment without a (known) session is served, but belongs to no session.
      if (session !== undefined) {
        // Its first segment makes a pending viewer active: only now does it take a slot.
        if (!session.active) this.refuseOverLimit();
        this.collector.touch(session, true);
        this.count(request, reply, session);
      }
      return undefined;
    }
    if (id === undefined) return this.handOff(event);
    const session = this.collector.get(id) ?? this.reopen(event, id);
    this.collector.touch(session, false);
    this.count(request, reply, session);
    const text = (await event.file.readAll()).toString('utf8');
    return { body: Buffer.from(withSession(text, session.id)) };
  }

  /** First request of a viewer: a new pending session and the master playlist that names it. */
  private async handOff(event: ServeEvent): Promise<ServeOverride> {
    const session = this.openSession(event, newSessionId());
    this.count(event.request, event.reply, session);
    const text = (await event.file.readAll()).toString('utf8');
    if (isMasterPlaylist(text)) return { body: Buffer.from(withSession(text, session.id)) };
    const uri = addQueryParam(ownUri(event.request), SESSION_PARAM, session.id);
    const bandwidth = (await estimateBandwidth(event, text)) ?? DEFAULT_BANDWIDTH;
    return { body: Buffer.from(handOffMasterPlaylist(uri, bandwidth)) };
  }

  /** A well-formed id we do not know (expired, or from before a restart): the viewer continues under it. */
  private reopen(event: ServeEvent, id: string): Session {
    return this.openSession(event, id);
  }

  private openSession(event: ServeEvent, id: string): Session {
    this.refuseOverLimit();
    return this.collector.open({
      id,
      remote: event.request.ip,
      local: event.urlPath,
      reference: referenceOf(event.urlPath),
      active: false,
    });
  }

  /** 509 naming the limit when no viewer may start now (slots of active viewers, egress). */
  private refuseOverLimit(): void {
    const exceeded = this.collector.limitExceeded();
    if (exceeded !== undefined) throw new ApiError('BANDWIDTH_LIMIT_EXCEEDED', exceeded);
  }

  private count(request: FastifyRequest, reply: FastifyReply, session: Session): void {
    this.meter.attribute(request, reply, 0, (rx, tx) => this.collector.countBytes(rx, tx, session));
  }
}

function sessionParam(request: FastifyRequest): string | undefined {
  const value = (request.query as Record<string, string | string[] | undefined> | undefined)?.[SESSION_PARAM];
  return Array.isArray(value) ? value[0] : value;
}

function withSession(text: string, id: string): string {
  return rewritePlaylistUris(text, (uri) => addQueryParam(uri, SESSION_PARAM, id));
}

/** The last segment of the request's own URL with its query, as a relative URI. */
function ownUri(request: FastifyRequest): string {
  const url = request.url;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const name = path.slice(path.lastIndexOf('/') + 1);
  return query === -1 ? name : `${name}${url.slice(query)}`;
}

/** Bit/s of the newest segments (size over `#EXTINF` duration), when they can be found. */
async function estimateBandwidth(event: ServeEvent, playlist: string): Promise<number | undefined> {
  const mount = event.filesystem.mount === '/' ? '' : event.filesystem.mount;
  let bytes = 0;
  let seconds = 0;
  for (const segment of playlistSegments(playlist).slice(-ESTIMATE_SEGMENTS)) {
    const urlPath = resolvePlaylistUri(event.urlPath, segment.uri);
    if (urlPath === undefined || !urlPath.startsWith(`${mount}/`)) continue;
    const file = await event.filesystem.open(urlPath.slice(mount.length));
    if (file === undefined || segment.durationSec <= 0) continue;
    bytes += file.info.size_bytes;
    seconds += segment.durationSec;
  }
  return seconds > 0 ? (bytes * 8) / seconds : undefined;
}
