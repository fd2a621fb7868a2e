import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { encodeAmf0, type Amf0Value, decodeAmf0 } from '../../src/ingest/rtmp/amf0.js';
import { ChunkReader } from '../../src/ingest/rtmp/chunk-reader.js';
import { encodeChunks } from '../../src/ingest/rtmp/chunk-writer.js';
import { MessageType, type RtmpMessage } from '../../src/ingest/rtmp/message.js';

/**
 * A minimal RTMP client over a raw socket, for tests and the benchmark: handshake, `connect`,
 * `createStream`, then `play` or `publish`. It reuses the server's chunk codec, which the protocol
 * tests check against itself and the server tests check against ffmpeg.
 */
export class RtmpTestClient {
  readonly socket: Socket;
  readonly statuses: string[] = [];
  /** Media messages (audio/video) received, and their payload bytes. */
  mediaMessages = 0;
  mediaBytes = 0;
  /** Timestamp of the last media message received, ms (-1 before the first). */
  lastMediaTimestamp = -1;
  private chunkSize = 128;
  /** Every message received, when `keepMessages`. */
  readonly messages: RtmpMessage[] = [];
  private readonly reader: ChunkReader;
  private handshakeLeft = 1 + 2 * 1536;
  private readonly waiters: { code: string; resolve: () => void }[] = [];
  private handshaken: () => void = () => undefined;
  private readonly ready = new Promise<void>((resolve) => (this.handshaken = resolve));

  private constructor(
    socket: Socket,
    private readonly keepMessages: boolean,
  ) {
    this.socket = socket;
    this.reader = new ChunkReader({ maxMessageBytes: 32 << 20, maxChunkStreams: 64 }, (message) =>
      this.onMessage(message),
    );
    socket.on('data', (data: Buffer) => {
      if (this.handshakeLeft > 0) {
        const used = Math.min(this.handshakeLeft, data.length);
        this.handshakeLeft -= used;
        data = data.subarray(used);
        if (this.handshakeLeft === 0) {
          socket.write(randomBytes(1536)); // C2
          this.handshaken();
        }
      }
      if (data.length > 0) this.reader.push(data);
    });
  }

  static async open(port: number, options: { keepMessages?: boolean } = {}): Promise<RtmpTestClient> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.on('error', () => undefined);
    const client = new RtmpTestClient(socket, options.keepMessages ?? false);
    // C1: time, then four zero bytes (RTMP 1.0, 5.2.3; a non-zero version asks for the digest
    // handshake, which joy4-based servers such as the reference then insist on), then random.
    const c1 = randomBytes(1536);
    c1.fill(0, 4, 8);
    socket.write(Buffer.concat([Buffer.from([3]), c1]));
    await client.ready;
    return client;
  }

  /** Sends `connect` and `createStream`, then `play(name)`; resolves with the first status code. */
  async play(app: string, name: string): Promise<string> {
    this.command(0, ['connect', 1, { app, tcUrl: `rtmp://127.0.0.1/${app}` }]);
    this.command(0, ['createStream', 2, null]);
    this.command(1, ['play', 0, null, name]);
    return this.nextStatus();
  }

  /** Sends `connect`, `createStream`, `publish(name)`; resolves with the status code. */
  async publish(app: string, name: string): Promise<string> {
    this.command(0, ['connect', 1, { app, tcUrl: `rtmp://127.0.0.1/${app}` }]);
    this.command(0, ['createStream', 2, null]);
    this.command(1, ['publish', 0, null, name, 'live']);
    return this.nextStatus();
  }

  /** Sends one media message on message stream 1. */
  sendMedia(typeId: number, timestamp: number, payload: Buffer): boolean {
    return this.socket.write(encodeChunks({ typeId, streamId: 1, timestamp, payload }, 6, this.chunkSize));
  }

  /** Sends Set Chunk Size; media goes out in chunks of `bytes` from now on (OBS uses 4096). */
  setChunkSize(bytes: number): void {
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(bytes);
    this.socket.write(
      encodeChunks({ typeId: MessageType.SET_CHUNK_SIZE, streamId: 0, timestamp: 0, payload }, 2, 128),
    );
    this.chunkSize = bytes;
  }

  close(): void {
    this.socket.destroy();
  }

  private command(streamId: number, values: Amf0Value[]): void {
    const payload = encodeAmf0(values);
    this.socket.write(
      encodeChunks({ typeId: MessageType.COMMAND_AMF0, streamId, timestamp: 0, payload }, 3, 128),
    );
  }

  private nextStatus(): Promise<string> {
    return new Promise((resolve, reject) => {
      const seen = this.statuses.length;
      const timer = setTimeout(() => reject(new Error('no onStatus within 5 s')), 5000);
      const check = (): void => {
        const code = this.statuses[seen];
        if (code !== undefined) {
          clearTimeout(timer);
          resolve(code);
        } else this.waiters.push({ code: '', resolve: check });
      };
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve(this.statuses[seen] ?? 'closed');
      });
      check();
    });
  }

  private onMessage(message: RtmpMessage): void {
    if (this.keepMessages) this.messages.push(message);
    if (message.typeId === MessageType.AUDIO || message.typeId === MessageType.VIDEO) {
      this.mediaMessages++;
      this.mediaBytes += message.payload.length;
      this.lastMediaTimestamp = message.timestamp;
      return;
    }
    if (message.typeId !== MessageType.COMMAND_AMF0) return;
    const values = decodeAmf0(message.payload);
    const info = values[3];
    if (values[0] === 'onStatus' && typeof info === 'object' && info !== null && 'code' in info) {
      this.statuses.push(typeof info.code === 'string' ? info.code : '');
      for (const waiter of this.waiters.splice(0)) waiter.resolve();
    }
  }
}
