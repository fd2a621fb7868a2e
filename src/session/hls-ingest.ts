import type { ChangeEvent, MountHooks } from '../storage/index.js';
import { playlistUris, resolvePlaylistUri } from './playlist.js';
import { referenceOf } from './reference.js';
import type { Session, SessionCollector } from './session-collector.js';
import { newSessionId } from './session-id.js';
import type { TrafficMeter } from './traffic-meter.js';

/**
 * Files an HLS muxer writes besides playlists: MPEG-TS and fMP4 segments (and the fMP4 init
 * section), audio-only segments, subtitles. Other memfs writes (a snapshot, a JSON) are not ingest.
 */
const SEGMENT_EXTENSION = /\.(ts|m4s|mp4|aac|vtt)$/i;

/** Segment bytes not yet claimed by a playlist are kept this long, ms. */
const UNCLAIMED_SEGMENT_TTL_MS = 60_000;

interface Unclaimed {
  rx: number;
  tx: number;
  atMs: number;
}

/**
 * HLS ingest sessions (collector `hlsingress`, docs/sessions.md#the-contract): an encoder writing a playlist and its
 * segments into memfs is one session per playlist path, whatever its address.
 *
 * A segment is written before the playlist that lists it, so its bytes count into the collector at
 * once but wait, unclaimed, until a playlist PUT lists the segment; then they count into that
 * playlist's session too. Segments a playlist listed before are claimed at once.
 */
export class HlsIngestSessions implements MountHooks {
  private readonly byPlaylist = new Map<string, Session>();
  /** Segment URL path → playlist URL path, as the playlist last listed them. */
  private readonly owners = new Map<string, string>();
  /** Playlist URL path → the segment URL paths it listed last. */
  private readonly listed = new Map<string, Set<string>>();
  private readonly unclaimed = new Map<string, Unclaimed>();

  constructor(
    private readonly collector: SessionCollector,
    private readonly meter: TrafficMeter,
    private readonly now: () => number,
  ) {}

  afterWrite(event: ChangeEvent): void {
    if (event.filesystem.type === 'disk') return;
    const { request, reply, urlPath } = event;
    if (urlPath.toLowerCase().endsWith('.m3u8')) {
      const session = this.sessionFor(urlPath, request.ip);
      this.meter.attribute(request, reply, event.bytes, (rx, tx) =>
        this.collector.countBytes(rx, tx, session),
      );
      if (event.data !== undefined) this.claimListed(urlPath, event.data.toString('utf8'), session);
      return;
    }
    const owner = this.owners.get(urlPath);
    if (owner === undefined && !SEGMENT_EXTENSION.test(urlPath)) return;
    const session = owner === undefined ? undefined : this.liveSession(owner);
    this.meter.attribute(request, reply, event.bytes, (rx, tx) => {
      this.collector.countBytes(rx, tx, session);
      if (session === undefined) this.unclaimed.set(urlPath, { rx, tx, atMs: this.now() });
      else this.collector.touch(session, true);
    });
  }

  afterDelete(event: ChangeEvent): void {
    if (event.filesystem.type === 'disk') return;
    this.unclaimed.delete(event.urlPath);
    const playlist = this.owners.get(event.urlPath);
    if (playlist !== undefined) {
      this.owners.delete(event.urlPath);
      this.listed.get(playlist)?.delete(event.urlPath);
    }
    if (this.listed.has(event.urlPath)) this.forgetPlaylist(event.urlPath);
  }

  /** Drops unclaimed segment bytes that no playlist listed in time, and playlists whose session closed. */
  sweep(): void {
    const now = this.now();
    for (const [path, entry] of this.unclaimed) {
      if (now - entry.atMs > UNCLAIMED_SEGMENT_TTL_MS) this.unclaimed.delete(path);
    }
    for (const path of this.byPlaylist.keys()) {
      if (this.liveSession(path) === undefined) this.forgetPlaylist(path);
    }
  }

  private sessionFor(playlist: string, remote: string): Session {
    const live = this.liveSession(playlist);
    if (live !== undefined) {
      this.collector.touch(live, true);
      return live;
    }
    const session = this.collector.open({
      id: newSessionId(),
      remote,
      local: playlist,
      reference: referenceOf(playlist),
      active: true,
    });
    this.byPlaylist.set(playlist, session);
    return session;
  }

  /** The playlist's session while it is open in the collector. */
  private liveSession(playlist: string): Session | undefined {
    const session = this.byPlaylist.get(playlist);
    return session !== undefined && this.collector.get(session.id) === session ? session : undefined;
  }

  private claimListed(playlist: string, text: string, session: Session): void {
    const previous = this.listed.get(playlist) ?? new Set<string>();
    const current = new Set<string>();
    for (const uri of playlistUris(text)) {
      const segment = resolvePlaylistUri(playlist, uri);
      if (segment === undefined) continue;
      current.add(segment);
      this.owners.set(segment, playlist);
      const bytes = this.unclaimed.get(segment);
      if (bytes !== undefined) {
        this.unclaimed.delete(segment);
        this.collector.countSessionBytes(session, bytes.rx, bytes.tx);
      }
    }
    for (const segment of previous) {
      if (!current.has(segment) && this.owners.get(segment) === playlist) this.owners.delete(segment);
    }
    this.listed.set(playlist, current);
  }

  private forgetPlaylist(playlist: string): void {
    for (const segment of this.listed.get(playlist) ?? []) {
      if (this.owners.get(segment) === playlist) this.owners.delete(segment);
    }
    this.listed.delete(playlist);
    this.byPlaylist.delete(playlist);
  }
}
