import type { Socket } from 'node:net';
import type { ErrorEnvelope } from './errors.js';

/**
 * Answers requests that Node's HTTP parser rejects before any handler runs (oversized headers,
 * malformed request lines) with the contract's envelope instead of Node's bare status line, then
 * closes the connection: the parser's state is unusable after such an error.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const envelope: ErrorEnvelope = {
    code: status,
    message: STATUS_MESSAGES[status] ?? 'Bad Request',
    details: [error.code ?? 'malformed request'],
  };
  const body = JSON.stringify(envelope);
  socket.end(
    `HTTP/1.1 ${status} ${envelope.message}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
