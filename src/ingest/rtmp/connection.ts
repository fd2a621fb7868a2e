import type { Socket } from 'node:net';
import { decodeAmf0, encodeAmf0, type Amf0Object, type Amf0Value } from './amf0.js';
import { ChunkReader } from './chunk-reader.js';
import * as control from './control.js';
import { ServerHandshake } from './handshake.js';
import { PLAY_STREAM_ID, type LiveStream, type PlayerSink } from './live-stream.js';
import { MessageType, type RtmpMessage } from './message.js';

/** Bounds and sizes of one connection. */
export interface ConnectionLimits {
  /** Largest message before `publish` succeeded (commands only), bytes. */
  maxCommandBytes: number;
  /** Largest message of a publisher (a video frame), bytes. */
  maxMediaBytes: number;
  maxChunkStreams: number;
  /** Chunk size we send with, bytes. */
  chunkSize: number;
}

/** What a connection asks its server: decisions about names, and where streams live. */
export interface ConnectionHost {
  /** Publishing: undefined and the stream, or a refusal (`code`, `description`) for `onStatus`. */
  startPublish(connection: RtmpConnection, app: string, name: string): PublishDecision;
  /** Playing: the stream, or a refusal. */
  startPlay(connection: RtmpConnection, app: string, name: string): PlayDecision;
  /** The connection ended (its stream, if it published one, ends too). */
  closed(connection: RtmpConnection): void;
}

export type PublishDecision = { stream: LiveStream } | { code: string; description: string };
export type PlayDecision = { stream: LiveStream } | { code: string; description: string };

/** What a publisher acknowledges at least, bytes (OBS and ffmpeg use 2.5 MB). */
const WINDOW_ACK_BYTES = 2_500_000;
/** How long a refused peer may take to read the refusal before the socket is destroyed, ms. */
const REFUSED_LINGER_MS = 2_000;

/**
 * One RTMP connection: handshake, chunk stream, the AMF0 commands of a publisher (`connect`,
 * `releaseStream`, `FCPublish`, `createStream`, `publish`, `deleteStream`) or a player (`play`),
 * and the messages a publisher sends once `publish` succeeded. Media before that, or on another
 * message stream, is dropped; a protocol error closes the connection.
 */
export class RtmpConnection implements PlayerSink {
  readonly remoteAddress: string;
  role: 'none' | 'publisher' | 'player' = 'none';
  /** The stream this connection publishes or plays. */
  stream: LiveStream | undefined;
  /** When bytes last arrived, ms (the server closes idle publishers and unfinished handshakes). */
  lastReceiveMs: number;
  /** Why the connection ended, for the log. */
  closeReason = '';
  private readonly handshake: ServerHandshake;
  private readonly reader: ChunkReader;
  private app = '';
  private publishStreamId = -1;
  private ackWindow = 0;
  private lastAck = 0;
  private received = 0;
  private ended = false;

  constructor(
    readonly socket: Socket,
    private readonly host: ConnectionHost,
    private readonly limits: ConnectionLimits,
    private readonly now: () => number,
  ) {
    this.remoteAddress = socket.remoteAddress ?? '';
    this.lastReceiveMs = now();
    this.handshake = new ServerHandshake(now);
    this.reader = new ChunkReader(
      { maxMessageBytes: limits.maxCommandBytes, maxChunkStreams: limits.maxChunkStreams },
      (message) => this.onMessage(message),
    );
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', () => this.close('socket error'));
    socket.on('close', () => this.close('socket closed'));
  }

  /** Bytes through the socket so far (TLS: the encrypted bytes), for session accounting. */
  byteCounts(): { bytesRead: number; bytesWritten: number } {
    return { bytesRead: this.socket.bytesRead, bytesWritten: this.socket.bytesWritten };
  }

  get queuedBytes(): number {
    return this.socket.writableLength;
  }

  write(bytes: Buffer): void {
    if (!this.ended) this.socket.write(bytes);
  }

  /** Ends the connection once; the server forgets it. */
  close(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.closeReason = reason;
    this.socket.destroy();
    this.host.closed(this);
  }

  private onData(data: Buffer): void {
    if (this.ended) return;
    this.lastReceiveMs = this.now();
    try {
      if (!this.handshake.done) {
        const { reply, rest } = this.handshake.push(data);
        if (reply !== undefined) this.socket.write(reply);
        if (rest === undefined) return;
        data = rest;
      }
      this.received += data.length;
      this.reader.push(data);
      this.acknowledge();
    } catch (error) {
      // Whatever a peer sends ends at most its own connection; the server logs the reason.
      this.close(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
  }

  private acknowledge(): void {
    if (this.ackWindow === 0 || this.received - this.lastAck < this.ackWindow) return;
    this.lastAck = this.received;
    this.socket.write(control.acknowledgement(this.received));
  }

  private onMessage(message: RtmpMessage): void {
    if (this.ended) return;
    switch (message.typeId) {
      case MessageType.WINDOW_ACK_SIZE:
        if (message.payload.length >= 4) this.ackWindow = message.payload.readUInt32BE(0);
        return;
      case MessageType.COMMAND_AMF0:
        this.onCommand(message, decodeAmf0(message.payload));
        return;
      case MessageType.COMMAND_AMF3:
        // An AMF3 command message starts with one format byte, then AMF0 values (§7.1.1).
        this.onCommand(message, decodeAmf0(message.payload.subarray(1)));
        return;
      case MessageType.AUDIO:
      case MessageType.VIDEO:
        if (this.isPublishing(message)) {
          (this.stream as LiveStream).pushMedia(message.typeId, message.timestamp, message.payload);
        }
        return;
      case MessageType.DATA_AMF0:
        if (this.isPublishing(message)) this.onMetadataMessage(message.payload);
        return;
      default:
        // Acknowledgements, user control, bandwidth, AMF3 data, aggregates: nothing we act on.
        return;
    }
  }

  private isPublishing(message: RtmpMessage): boolean {
    return this.role === 'publisher' && message.streamId === this.publishStreamId;
  }

  private onMetadataMessage(payload: Buffer): void {
    const values = decodeAmf0(payload);
    // ffmpeg and OBS send `@setDataFrame("onMetaData", {...})`; players expect `onMetaData({...})`.
    const start = values[0] === '@setDataFrame' ? 1 : 0;
    if (values[start] !== 'onMetaData') return;
    (this.stream as LiveStream).setMetadata(encodeAmf0(values.slice(start)));
  }

  private onCommand(message: RtmpMessage, values: Amf0Value[]): void {
    const [name, transaction] = values;
    const id = typeof transaction === 'number' ? transaction : 0;
    switch (name) {
      case 'connect':
        this.onConnect(id, values[2]);
        return;
      case 'createStream':
        this.reply(id, [null, PLAY_STREAM_ID]);
        return;
      case 'publish':
        this.onPublish(message.streamId, values[3]);
        return;
      case 'play':
        this.onPlay(message.streamId, values[3]);
        return;
      case 'deleteStream':
      case 'FCUnpublish':
      case 'closeStream':
        if (this.role === 'publisher') this.close('publisher ended the stream');
        return;
      default:
        // releaseStream, FCPublish, getStreamLength, _checkbw: no encoder waits for an answer.
        return;
    }
  }

  private onConnect(transaction: number, object: Amf0Value): void {
    const app = isObject(object) ? object.app : undefined;
    this.app = typeof app === 'string' ? app : '';
    const size = this.limits.chunkSize;
    this.socket.write(
      Buffer.concat([
        control.windowAckSize(WINDOW_ACK_BYTES),
        control.setPeerBandwidth(WINDOW_ACK_BYTES),
        control.setChunkSize(size),
      ]),
    );
    this.reply(transaction, [
      { fmsVer: 'FMS/3,0,1,123', capabilities: 31 },
      {
        level: 'status',
        code: 'NetConnection.Connect.Success',
        description: 'Connection succeeded.',
        objectEncoding: 0,
      },
    ]);
  }

  private onPublish(streamId: number, name: Amf0Value): void {
    if (this.role !== 'none')
      return this.refuse(streamId, 'NetStream.Publish.BadConnection', 'already in use');
    const decision = this.host.startPublish(this, this.app, typeof name === 'string' ? name : '');
    if (!('stream' in decision)) return this.refuse(streamId, decision.code, decision.description);
    this.role = 'publisher';
    this.stream = decision.stream;
    this.publishStreamId = streamId;
    this.reader.setMaxMessageBytes(this.limits.maxMediaBytes);
    this.socket.write(
      control.onStatus(
        streamId,
        'status',
        'NetStream.Publish.Start',
        `${decision.stream.path} is now published.`,
        this.limits.chunkSize,
      ),
    );
  }

  private onPlay(streamId: number, name: Amf0Value): void {
    if (this.role !== 'none') return this.refuse(streamId, 'NetStream.Play.Failed', 'already in use');
    const decision = this.host.startPlay(this, this.app, typeof name === 'string' ? name : '');
    if (!('stream' in decision)) return this.refuse(streamId, decision.code, decision.description);
    this.role = 'player';
    this.stream = decision.stream;
    const size = this.limits.chunkSize;
    const path = decision.stream.path;
    this.socket.write(
      Buffer.concat([
        control.streamBegin(PLAY_STREAM_ID),
        control.onStatus(
          PLAY_STREAM_ID,
          'status',
          'NetStream.Play.Reset',
          `Playing and resetting ${path}.`,
          size,
        ),
        control.onStatus(PLAY_STREAM_ID, 'status', 'NetStream.Play.Start', `Started playing ${path}.`, size),
        control.dataMessage(PLAY_STREAM_ID, ['|RtmpSampleAccess', false, false], size),
      ]),
    );
    decision.stream.addPlayer(this);
  }

  /** Answers with an error status and closes: nothing the peer sends afterwards is read. */
  private refuse(streamId: number, code: string, description: string): void {
    const bytes = control.onStatus(streamId, 'error', code, description, this.limits.chunkSize);
    this.ended = true;
    this.closeReason = `refused: ${description}`;
    this.socket.end(bytes);
    // The peer gets time to read the answer; one that keeps the socket open is cut off.
    setTimeout(() => this.socket.destroy(), REFUSED_LINGER_MS).unref();
    this.host.closed(this);
  }

  private reply(transaction: number, values: Amf0Value[]): void {
    this.socket.write(control.command(0, ['_result', transaction, ...values], this.limits.chunkSize));
  }
}

function isObject(value: Amf0Value): value is Amf0Object {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
