import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressList } from './address-list.js';
import { throttleKeyOfAddress } from './client-address.js';

/** The answer written to a connection over the cap, before it is closed. */
const OVER_CAP_BODY = JSON.stringify({
  code: 503,
  message: 'Service Unavailable',
  details: ['too many open connections from this address (api.connections.max_per_address)'],
});
const OVER_CAP_ANSWER =
  'HTTP/1.1 503 Service Unavailable\r\n' +
  'Content-Type: application/json; charset=utf-8\r\n' +
  `Content-Length: ${Buffer.byteLength(OVER_CAP_BODY)}\r\n` +
  'Retry-After: 1\r\n' +
  'Connection: close\r\n\r\n' +
  OVER_CAP_BODY;

/**
 * Caps the open connections of one client address (IPv6: one /64) on `server`: a connection over
 * `maxPerAddress` is answered 503 and closed before any request on it is read. The count is the
 * socket's peer, not a forwarded address: a reverse proxy belongs in `exempt`. 0 turns the cap off.
 */
export function capConnectionsPerAddress(server: Server, maxPerAddress: number, exempt: AddressList): void {
  if (maxPerAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || exempt.includes(address)) return;
    const key = throttleKeyOfAddress(address);
    const count = open.get(key) ?? 0;
    if (count >= maxPerAddress) {
      socket.end(OVER_CAP_ANSWER);
      // A client that never reads its answer must not keep the socket either.
      socket.setTimeout(1000, () => socket.destroy());
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
