import { encodeAmf0, type Amf0Value } from './amf0.js';
import { ChunkStreamId, encodeChunks } from './chunk-writer.js';
import { MessageType } from './message.js';

/** The chunk size of our control messages: they are sent before the peer learns our own size. */
const PROTOCOL_CHUNK_SIZE = 128;

function control(typeId: number, payload: Buffer): Buffer {
  return encodeChunks(
    { typeId, streamId: 0, timestamp: 0, payload },
    ChunkStreamId.CONTROL,
    PROTOCOL_CHUNK_SIZE,
  );
}

function uint32(value: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(value >>> 0, 0);
  return payload;
}

/** Set Chunk Size (§5.4.1): the largest chunk payload we send from now on, bytes. */
export function setChunkSize(bytes: number): Buffer {
  return control(MessageType.SET_CHUNK_SIZE, uint32(bytes));
}

/** Window Acknowledgement Size (§5.4.4), bytes. */
export function windowAckSize(bytes: number): Buffer {
  return control(MessageType.WINDOW_ACK_SIZE, uint32(bytes));
}

/** Acknowledgement (§5.4.3): bytes received so far (32-bit, wrapping). */
export function acknowledgement(bytesReceived: number): Buffer {
  return control(MessageType.ACKNOWLEDGEMENT, uint32(bytesReceived));
}

/** Set Peer Bandwidth (§5.4.5), bytes, limit type 2 (dynamic). */
export function setPeerBandwidth(bytes: number): Buffer {
  const payload = Buffer.allocUnsafe(5);
  payload.writeUInt32BE(bytes, 0);
  payload[4] = 2;
  return control(MessageType.SET_PEER_BANDWIDTH, payload);
}

/** User Control Stream Begin (§7.1.7, event 0) for a message stream. */
export function streamBegin(streamId: number): Buffer {
  const payload = Buffer.allocUnsafe(6);
  payload.writeUInt16BE(0, 0);
  payload.writeUInt32BE(streamId, 2);
  return control(MessageType.USER_CONTROL, payload);
}

/** An AMF0 command message (`_result`, `onStatus`, …) on a message stream. */
export function command(streamId: number, values: readonly Amf0Value[], chunkSize: number): Buffer {
  return encodeChunks(
    { typeId: MessageType.COMMAND_AMF0, streamId, timestamp: 0, payload: encodeAmf0(values) },
    ChunkStreamId.COMMAND,
    chunkSize,
  );
}

/** `onStatus(level, code, description)` on a message stream (§7.2.2). */
export function onStatus(
  streamId: number,
  level: 'status' | 'error',
  code: string,
  description: string,
  chunkSize: number,
): Buffer {
  return command(streamId, ['onStatus', 0, null, { level, code, description }], chunkSize);
}

/** An AMF0 data message (`|RtmpSampleAccess`, `onMetaData`). */
export function dataMessage(streamId: number, values: readonly Amf0Value[], chunkSize: number): Buffer {
  return encodeChunks(
    { typeId: MessageType.DATA_AMF0, streamId, timestamp: 0, payload: encodeAmf0(values) },
    ChunkStreamId.DATA,
    chunkSize,
  );
}
