import { ChunkStreamId, encodeChunks } from './chunk-writer.js';
import { classifyTag } from './flv-tag.js';
import { MessageType } from './message.js';

/** Where a player's bytes go: its socket, seen through what the relay needs. */
export interface PlayerSink {
  /** Queues bytes for the player (never blocks). */
  write(bytes: Buffer): void;
  /** Bytes written but not yet sent to the player. */
  readonly queuedBytes: number;
  /** Ends the player (it fell behind for too long, or the stream ended). */
  close(reason: string): void;
}

export interface RelayLimits {
  /** A player whose unsent bytes exceed this skips media until it drained and a keyframe comes, bytes. */
  maxPlayerQueueBytes: number;
  /** A player that stays behind this long is disconnected, ms. */
  maxBehindMs: number;
  /** The cached group of pictures for late joiners is dropped when it grows past this, bytes. */
  maxGopBytes: number;
  /** Chunk size of what players receive, bytes. */
  chunkSize: number;
}

/**
 * Receives a stream's messages as they come, not chunk-encoded: the server's own processes that
 * read the stream in the server (docs/processes.md#fallback-sources). `typeId` 18 is `onMetaData`.
 */
export interface TagListener {
  tag(typeId: number, timestamp: number, payload: Buffer): void;
  end(reason: string): void;
}

/** The message stream id every player's `createStream` gets: it lets all players share one encoding. */
export const PLAY_STREAM_ID = 1;

interface Player {
  readonly sink: PlayerSink;
  /** `live`: gets every tag; `waiting`: skips until a keyframe (joined or fell behind). */
  state: 'live' | 'waiting';
  /** Since when the player has been behind (see `isBehind`), ms; undefined when it is not. */
  behindSinceMs: number | undefined;
  skippedTags: number;
}

/**
 * One published stream and its players. Each incoming tag is chunk-encoded once, with a type-0
 * header and the publisher's timestamp, and that buffer is written to every player. Metadata and
 * the sequence headers are kept for late joiners, and so is the group of pictures since the last
 * keyframe (bounded), so a new player starts at once with a decodable frame. A slow player skips:
 * over its queue bound it drops tags until its queue halved and a keyframe comes; behind for longer
 * than `maxBehindMs` it is disconnected. The publisher never waits for a player.
 */
export class LiveStream {
  private readonly players = new Set<Player>();
  private readonly listeners = new Set<TagListener>();
  /** What a listener gets first: metadata and sequence headers as they came. */
  private readonly rawHeaders = new Map<number, { timestamp: number; payload: Buffer }>();
  private metadata: Buffer | undefined;
  private videoHeader: Buffer | undefined;
  private audioHeader: Buffer | undefined;
  private gop: Buffer[] = [];
  private gopBytes = 0;
  /** Whether `gop` starts at a keyframe and is complete since it (video streams only). */
  private gopValid = false;
  private hasVideo = false;
  /** Tags players skipped because they were behind (for the API and the benchmark). */
  skippedTags = 0;

  constructor(
    readonly path: string,
    private readonly limits: RelayLimits,
    private readonly now: () => number,
  ) {}

  get playerCount(): number {
    return this.players.size;
  }

  /** `onMetaData` from the publisher (its `@setDataFrame` wrapper already removed). */
  setMetadata(payload: Buffer): void {
    this.metadata = this.encode(MessageType.DATA_AMF0, 0, payload, ChunkStreamId.DATA);
    for (const player of this.players) player.sink.write(this.metadata);
    this.rawHeaders.set(MessageType.DATA_AMF0, { timestamp: 0, payload });
    for (const listener of this.listeners) listener.tag(MessageType.DATA_AMF0, 0, payload);
  }

  /** One audio or video message from the publisher. */
  pushMedia(typeId: number, timestamp: number, payload: Buffer): void {
    const video = typeId === MessageType.VIDEO;
    const kind = classifyTag(typeId, payload);
    const bytes = this.encode(typeId, timestamp, payload, video ? ChunkStreamId.VIDEO : ChunkStreamId.AUDIO);
    for (const listener of this.listeners) listener.tag(typeId, timestamp, payload);
    if (kind === 'sequence-header') {
      this.rawHeaders.set(typeId, { timestamp, payload });
      if (video) {
        this.hasVideo = true;
        this.videoHeader = bytes;
      } else this.audioHeader = bytes;
      // A new configuration (e.g. a resolution change) concerns every player, waiting or not.
      for (const player of this.players) player.sink.write(bytes);
      return;
    }
    if (video) this.hasVideo = true;
    const startsHere = kind === 'keyframe' || (!this.hasVideo && !video);
    this.cache(bytes, kind === 'keyframe');
    for (const player of this.players) this.offer(player, bytes, startsHere);
  }

  /** Adds a player: it gets the cached headers and, if complete, the cached group of pictures. */
  addPlayer(sink: PlayerSink): void {
    const player: Player = { sink, state: 'waiting', behindSinceMs: undefined, skippedTags: 0 };
    if (this.metadata !== undefined) sink.write(this.metadata);
    if (this.videoHeader !== undefined) sink.write(this.videoHeader);
    if (this.audioHeader !== undefined) sink.write(this.audioHeader);
    if (this.gopValid) {
      for (const bytes of this.gop) sink.write(bytes);
      player.state = 'live';
    }
    this.players.add(player);
  }

  /** Adds a listener: it gets the metadata and sequence headers so far, then every message; answers its removal. */
  addListener(listener: TagListener): () => void {
    for (const typeId of [MessageType.DATA_AMF0, MessageType.VIDEO, MessageType.AUDIO]) {
      const header = this.rawHeaders.get(typeId);
      if (header !== undefined) listener.tag(typeId, header.timestamp, header.payload);
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  removePlayer(sink: PlayerSink): void {
    for (const player of this.players) if (player.sink === sink) this.players.delete(player);
  }

  /** Ends the stream: every player is closed (as when the reference's queue closes). */
  end(reason: string): void {
    for (const player of [...this.players]) player.sink.close(reason);
    this.players.clear();
    for (const listener of [...this.listeners]) listener.end(reason);
    this.listeners.clear();
    this.gop = [];
    this.gopBytes = 0;
  }

  /** Disconnects players that stayed behind too long, also while no tags arrive. Call every second. */
  sweep(): void {
    const now = this.now();
    for (const player of [...this.players]) {
      if (!this.isBehind(player)) player.behindSinceMs = undefined;
      // The write that crossed the bound may have been the last tag for a while (the publisher
      // paused or ended its burst): the sweep starts the clock then, not only the next tag.
      else if (player.behindSinceMs === undefined) player.behindSinceMs = now;
      else if (now - player.behindSinceMs > this.limits.maxBehindMs) {
        this.players.delete(player);
        player.sink.close('player fell behind');
      }
    }
  }

  /**
   * Over its queue bound, or skipping with a queue it has not halved yet: a player whose socket
   * drained part of the queue and then stopped sits between half and the whole bound, skips every
   * tag, and would never be dropped if only the bound counted. A player that just joined waits
   * with an empty queue and is not behind.
   */
  private isBehind(player: Player): boolean {
    const queued = player.sink.queuedBytes;
    const bound = this.limits.maxPlayerQueueBytes;
    return queued > bound || (player.state === 'waiting' && queued > bound / 2);
  }

  private offer(player: Player, bytes: Buffer, startsHere: boolean): void {
    const queued = player.sink.queuedBytes;
    if (queued > this.limits.maxPlayerQueueBytes) {
      player.behindSinceMs ??= this.now();
      if (player.state === 'live') player.state = 'waiting';
      player.skippedTags++;
      this.skippedTags++;
      return;
    }
    if (player.state === 'waiting') {
      // Resume only with room to spare, so a player at the edge does not flap every tag.
      if (!startsHere || queued > this.limits.maxPlayerQueueBytes / 2) {
        if (!this.isBehind(player)) player.behindSinceMs = undefined;
        player.skippedTags++;
        this.skippedTags++;
        return;
      }
      player.state = 'live';
    }
    player.behindSinceMs = undefined;
    player.sink.write(bytes);
  }

  private cache(bytes: Buffer, keyframe: boolean): void {
    if (!this.hasVideo) return; // audio-only: any frame is a start; nothing to cache
    if (keyframe) {
      this.gop = [bytes];
      this.gopBytes = bytes.length;
      this.gopValid = true;
      return;
    }
    if (!this.gopValid) return;
    this.gopBytes += bytes.length;
    if (this.gopBytes > this.limits.maxGopBytes) {
      // Too long a group to replay: late joiners wait for the next keyframe instead.
      this.gop = [];
      this.gopBytes = 0;
      this.gopValid = false;
      return;
    }
    this.gop.push(bytes);
  }

  private encode(typeId: number, timestamp: number, payload: Buffer, csid: number): Buffer {
    return encodeChunks(
      { typeId, streamId: PLAY_STREAM_ID, timestamp, payload },
      csid,
      this.limits.chunkSize,
    );
  }
}
