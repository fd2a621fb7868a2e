import type { Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';

/** Where a TCP listener binds: `''` is every interface (dual-stack `::`). */
export interface BindAddress {
  host: string;
  port: number;
}

/**
 * The base URL clients on this machine reach a listener by: its bound address, with the
 * wildcard addresses replaced by loopback (`http://127.0.0.1:8080`).
 */
export function loopbackBaseUrl(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const loopbackHost = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
  return `http://${loopbackHost}:${address.port}`;
}

/** Binds `server` to `bind`; rejects with the listen error (the server stays unbound then). */
export function listenOn(server: Server, bind: BindAddress): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void => reject(error);
    server.once('error', fail);
    server.listen({ host: bind.host === '' ? '::' : bind.host, port: bind.port }, () => {
      server.off('error', fail);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Binds `bind` for a moment and lets go, so that a reload refuses an address it could not open;
 * throws naming `key` and the reason (`EADDRINUSE`, …).
 */
export async function probeListen(key: string, address: string, bind: BindAddress): Promise<void> {
  const server = createServer();
  try {
    await listenOn(server, bind);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`${key}: cannot listen on "${address}" (${code})`, { cause: error });
  } finally {
    server.close();
  }
}

/**
 * A plain listener that hands each connection to `http`, so it is answered with the server's
 * routes, hooks, time-outs and connection cap, as on the server's own listener (tls/ opens HTTPS
 * the same way).
 */
export async function openForwardingListener(http: HttpServer, bind: BindAddress): Promise<Server> {
  const server = createServer((socket) => http.emit('connection', socket));
  await listenOn(server, bind);
  return server;
}
