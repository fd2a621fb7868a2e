import { MessageType, RtmpProtocolError, type RtmpMessage } from './message.js';

/** Bounds on what one peer can make the reader hold. */
export interface ChunkReaderLimits {
  /** Largest message accepted, bytes (a declared length above it closes the connection). */
  maxMessageBytes: number;
  /** Chunk streams with state at once (the protocol allows 65 599). */
  maxChunkStreams: number;
}

interface ChunkStream {
  /** Timestamp of the current (or last) message, ms. */
  timestamp: number;
  /** The last header's timestamp field: absolute after type 0, a delta after types 1 and 2. */
  field: number;
  /** Whether the last header carried an extended timestamp (then type-3 chunks repeat it). */
  extended: boolean;
  length: number;
  typeId: number;
  streamId: number;
  /** Payload pieces of the message being assembled, and their total size. */
  parts: Buffer[];
  received: number;
}

const MESSAGE_HEADER_BYTES = [11, 7, 3, 0] as const;
const DEFAULT_CHUNK_SIZE = 128;

/**
 * Reassembles RTMP messages from the chunk stream (RTMP specification 1.0, §5.3). Bytes are
 * consumed as they arrive: what it holds is at most one partial header (< 18 bytes) plus the
 * payload received so far of messages in progress, each bounded by `maxMessageBytes` and their
 * sum by twice that. Set Chunk Size and Abort are applied here, since they change the parsing;
 * every message (those two included) is handed to `onMessage`. A protocol violation throws
 * `RtmpProtocolError`; the reader is then unusable.
 */
export class ChunkReader {
  private chunkSize = DEFAULT_CHUNK_SIZE;
  private readonly streams = new Map<number, ChunkStream>();
  private pending: Buffer = Buffer.alloc(0);
  /** The chunk whose payload is still arriving, and how many of its bytes are missing. */
  private current: ChunkStream | undefined;
  private remainingInChunk = 0;
  private inProgressBytes = 0;

  constructor(
    private limits: ChunkReaderLimits,
    private readonly onMessage: (message: RtmpMessage) => void,
  ) {}

  /** Changes the largest message accepted from now on (a publisher may send frames, a stranger only commands). */
  setMaxMessageBytes(bytes: number): void {
    this.limits = { ...this.limits, maxMessageBytes: bytes };
  }

  /** Bytes held for messages in progress (for tests and accounting). */
  get bufferedBytes(): number {
    return this.inProgressBytes + this.pending.length;
  }

  push(data: Buffer): void {
    const buffer = this.pending.length === 0 ? data : Buffer.concat([this.pending, data]);
    this.pending = Buffer.alloc(0);
    let offset = 0;
    while (offset < buffer.length) {
      if (this.current !== undefined) {
        offset = this.readPayload(buffer, offset);
        continue;
      }
      const consumed = this.readHeader(buffer, offset);
      if (consumed === 0) {
        // An incomplete header: keep a copy (at most 17 bytes), not a view that pins `data`.
        this.pending = Buffer.from(buffer.subarray(offset));
        return;
      }
      offset += consumed;
    }
  }

  /** Parses one chunk header at `offset`; returns the bytes it took, 0 when incomplete. */
  private readHeader(buffer: Buffer, offset: number): number {
    const available = buffer.length - offset;
    const first = buffer[offset] as number;
    const format = first >> 6;
    let csid = first & 0x3f;
    let position = offset + 1;
    if (csid === 0) {
      if (available < 2) return 0;
      csid = 64 + (buffer[position] as number);
      position += 1;
    } else if (csid === 1) {
      if (available < 3) return 0;
      csid = 64 + (buffer[position] as number) + (buffer[position + 1] as number) * 256;
      position += 2;
    }
    const headerBytes = MESSAGE_HEADER_BYTES[format as 0 | 1 | 2 | 3];
    if (buffer.length - position < headerBytes) return 0;
    const stream = this.streamFor(csid, format);
    const starting = stream.received === 0;
    if (!starting && format !== 3) {
      throw new RtmpProtocolError(`chunk stream ${csid}: a type-${format} header inside a message`);
    }
    let field = stream.field;
    let extended = stream.extended;
    let length = stream.length;
    let typeId = stream.typeId;
    let streamId = stream.streamId;
    if (format <= 2) {
      field = buffer.readUIntBE(position, 3);
      extended = field === 0xffffff;
    }
    if (format <= 1) {
      length = buffer.readUIntBE(position + 3, 3);
      typeId = buffer[position + 6] as number;
    }
    if (format === 0) streamId = buffer.readUInt32LE(position + 7);
    position += headerBytes;
    if (extended) {
      if (buffer.length - position < 4) return 0;
      // Type-3 chunks repeat the extended field (as ffmpeg and librtmp write it); only a header that
      // sets the field, or a type 3 that starts a message, takes its value.
      if (format <= 2 || starting) field = buffer.readUInt32BE(position);
      position += 4;
    }
    if (starting) {
      if (length > this.limits.maxMessageBytes) {
        throw new RtmpProtocolError(`message of ${length} bytes is over ${this.limits.maxMessageBytes}`);
      }
      stream.field = field;
      stream.extended = extended;
      stream.length = length;
      stream.typeId = typeId;
      stream.streamId = streamId;
      stream.timestamp = format === 0 ? field : (stream.timestamp + field) >>> 0;
    }
    if (length === 0) {
      this.emit(stream);
    } else {
      this.current = stream;
      this.remainingInChunk = Math.min(this.chunkSize, length - stream.received);
    }
    return position - offset;
  }

  private streamFor(csid: number, format: number): ChunkStream {
    let stream = this.streams.get(csid);
    if (stream !== undefined) return stream;
    if (format !== 0) throw new RtmpProtocolError(`chunk stream ${csid} starts with a type-${format} header`);
    if (this.streams.size >= this.limits.maxChunkStreams) {
      throw new RtmpProtocolError(`more than ${this.limits.maxChunkStreams} chunk streams`);
    }
    stream = {
      timestamp: 0,
      field: 0,
      extended: false,
      length: 0,
      typeId: 0,
      streamId: 0,
      parts: [],
      received: 0,
    };
    this.streams.set(csid, stream);
    return stream;
  }

  private readPayload(buffer: Buffer, offset: number): number {
    const stream = this.current as ChunkStream;
    const take = Math.min(this.remainingInChunk, buffer.length - offset);
    this.inProgressBytes += take;
    if (this.inProgressBytes > 2 * this.limits.maxMessageBytes) {
      throw new RtmpProtocolError(
        `more than ${2 * this.limits.maxMessageBytes} bytes in unfinished messages`,
      );
    }
    // A copy: a view would keep the socket's whole read buffer alive until the message completes.
    stream.parts.push(Buffer.from(buffer.subarray(offset, offset + take)));
    stream.received += take;
    this.remainingInChunk -= take;
    if (this.remainingInChunk === 0) {
      this.current = undefined;
      if (stream.received === stream.length) this.emit(stream);
    }
    return offset + take;
  }

  private emit(stream: ChunkStream): void {
    const payload = stream.parts.length === 1 ? (stream.parts[0] as Buffer) : Buffer.concat(stream.parts);
    this.inProgressBytes -= stream.received;
    stream.parts = [];
    stream.received = 0;
    const message: RtmpMessage = {
      typeId: stream.typeId,
      streamId: stream.streamId,
      timestamp: stream.timestamp,
      payload,
    };
    if (message.typeId === MessageType.SET_CHUNK_SIZE) this.setChunkSize(payload);
    else if (message.typeId === MessageType.ABORT) this.abort(payload);
    this.onMessage(message);
  }

  private setChunkSize(payload: Buffer): void {
    if (payload.length < 4) throw new RtmpProtocolError('Set Chunk Size shorter than 4 bytes');
    const size = payload.readUInt32BE(0) & 0x7fffffff;
    if (size < 1) throw new RtmpProtocolError('Set Chunk Size of 0');
    // Any size is safe: payload is consumed as it arrives, never buffered a whole chunk at a time.
    this.chunkSize = size;
  }

  private abort(payload: Buffer): void {
    if (payload.length < 4) throw new RtmpProtocolError('Abort shorter than 4 bytes');
    const stream = this.streams.get(payload.readUInt32BE(0));
    if (stream === undefined || stream === this.current) return;
    this.inProgressBytes -= stream.received;
    stream.parts = [];
    stream.received = 0;
  }
}
