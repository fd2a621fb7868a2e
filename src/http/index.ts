export { ApiError, ERRORS, type ErrorCode, type ErrorEnvelope } from './errors.js';
export { createHttpServer, type HttpServer } from './server.js';
export { DirectLane, type DirectMeter, type PreparedBody } from './direct-lane.js';
export { replyError, sendEnvelope } from './error-handler.js';
export { JSON_CONTENT_TYPE } from './json-body.js';
export { addVary } from './vary.js';
export { describeJsonSyntaxError } from './json-syntax-error.js';
export { acceptsGzip, gzipWanted, GZIP_THRESHOLD_BYTES } from './accept-encoding.js';
