import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import type { ServedCertificate } from './served-certificate.js';
import { createCertificateServer } from './tls-server.js';

/**
 * The HTTPS listener: TLS is taken off here and each connection is handed to the plain HTTP
 * server, so one server answers both with the same routes, hooks, time-outs and per-address
 * connection cap, and `request.protocol` says `https` (the socket is encrypted). HTTP/1.1 only:
 * HTTP/2 serves HLS worse (bench/hls-http2.ts, docs/tls.md#http2).
 */
export class HttpsListener {
  private constructor(
    private readonly server: TlsServer,
    /** Where it listens. */
    readonly address: AddressInfo,
  ) {}

  /** Listens on `host:port` (`''` = every interface) and answers the bound address. */
  static async open(
    http: HttpServer,
    certificate: ServedCertificate,
    bind: { host: string; port: number },
  ): Promise<{ listener: HttpsListener; address: AddressInfo }> {
    const server = createCertificateServer(certificate, (socket) => http.emit('connection', socket), {
      alpn: ['http/1.1'],
      // The handshake is part of the headers' time: the same limit as node's headersTimeout.
      handshakeTimeoutMs: http.headersTimeout,
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: bind.host === '' ? '::' : bind.host, port: bind.port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    return { listener: new HttpsListener(server, address), address };
  }

  /**
   * Stops accepting. Not waiting for the connections: those it handed over close with the HTTP
   * server's (a keep-alive one would otherwise hold the shutdown until the HTTP server closes).
   */
  close(): void {
    this.server.close();
  }
}
