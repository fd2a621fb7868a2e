export { RtmpServer, type RtmpServerOptions, type RtmpSessionSink } from './server.js';
export type { RtmpConnection } from './connection.js';
export { ChunkReader } from './chunk-reader.js';
export { encodeChunks } from './chunk-writer.js';
export { decodeAmf0, encodeAmf0, type Amf0Value } from './amf0.js';
export { MessageType, RtmpProtocolError, type RtmpMessage } from './message.js';
export { parseStreamPath } from './stream-path.js';
export type { TagListener } from './live-stream.js';
