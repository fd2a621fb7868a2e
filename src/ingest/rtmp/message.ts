/** RTMP message type ids (RTMP specification 1.0, §5.4 and §7.1). */
export const MessageType = {
  SET_CHUNK_SIZE: 1,
  ABORT: 2,
  ACKNOWLEDGEMENT: 3,
  USER_CONTROL: 4,
  WINDOW_ACK_SIZE: 5,
  SET_PEER_BANDWIDTH: 6,
  AUDIO: 8,
  VIDEO: 9,
  DATA_AMF3: 15,
  COMMAND_AMF3: 17,
  DATA_AMF0: 18,
  COMMAND_AMF0: 20,
} as const;

/** One reassembled RTMP message. */
export interface RtmpMessage {
  typeId: number;
  /** Message stream id (0 for control and connection commands). */
  streamId: number;
  /** Milliseconds, 32-bit, wrapping. */
  timestamp: number;
  payload: Buffer;
}

/** A peer that broke the protocol: the connection is closed, the message says how. */
export class RtmpProtocolError extends Error {
  override readonly name = 'RtmpProtocolError';
}
