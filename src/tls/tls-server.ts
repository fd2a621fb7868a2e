import type { Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { TLS_POLICY } from './cipher-policy.js';
import type { ServedCertificate } from './served-certificate.js';

export interface TlsServerOptions {
  /** HTTP/1.1 for HTTPS; none for RTMPS. */
  alpn?: string[];
  /** How long a client may take for its handshake, ms. */
  handshakeTimeoutMs?: number;
}

/**
 * A TLS server with the protocol policy (cipher-policy.ts) that serves `certificate`, and every
 * later one as soon as it is replaced: the handshakes after a renewal get the new certificate,
 * open connections are not touched. Without a certificate yet (an automatic one still pending),
 * handshakes fail and the server listens all the same, so its port is held and checked at start.
 */
export function createCertificateServer(
  certificate: ServedCertificate,
  onSecureSocket: (socket: TLSSocket) => void,
  options: TlsServerOptions = {},
): Server {
  const current = certificate.current;
  const server = createServer(
    {
      ...TLS_POLICY,
      ...(current === undefined ? {} : { cert: current.cert, key: current.key }),
      ...(options.alpn === undefined ? {} : { ALPNProtocols: options.alpn }),
      ...(options.handshakeTimeoutMs === undefined ? {} : { handshakeTimeout: options.handshakeTimeoutMs }),
    },
    onSecureSocket,
  );
  const unsubscribe = certificate.subscribe((pair) => server.setSecureContext({ ...TLS_POLICY, ...pair }));
  server.on('close', unsubscribe);
  // A failed handshake (a scanner, an old client, no certificate yet) concerns that client only.
  server.on('tlsClientError', (_error: Error, socket: Socket) => socket.destroy());
  return server;
}
