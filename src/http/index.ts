export { ApiError, ERRORS, type ErrorCode, type ErrorEnvelope } from './errors.js';
export { RequestCheck } from './request-check.js';
export { Given } from './given.js';
export { createHttpServer, type HttpServer, type HttpServerOptions } from './server.js';
export type { LocalOnly } from './local-only.js';
export {
  BEARER,
  empty,
  errors,
  GUARDED,
  HTTP_DOCS,
  JSON_BODY,
  opaque,
  PUBLIC,
  SAVED,
  type ApiContracts,
  type ApiDescription,
  type RouteDoc,
} from './openapi/index.js';
export { replyError, sendEnvelope } from './error-handler.js';
export { JSON_CONTENT_TYPE } from './json-body.js';
export { addVary } from './vary.js';
export { describeJsonSyntaxError } from './json-syntax-error.js';
export { EncodedBody } from './encoded-body.js';
export { gzipInPieces } from './parallel-gzip.js';
export { ScratchBuffer } from './scratch-buffer.js';
export { acceptsGzip, gzipWanted, GZIP_THRESHOLD_BYTES } from './accept-encoding.js';
export { holdsVersion, strongEtag } from './etag.js';
export { AddressList } from './address-list.js';
export { HttpAddress } from './address-move.js';
export { loopbackBaseUrl, probeListen } from './listen-address.js';
export { throttleKeyOfAddress, withoutMappedPrefix } from './client-address.js';
export { limitInflatedBody } from './inflate-limit.js';
export { isUnderPrefix } from './request-path.js';
