import { createSocket } from 'node:dgram';
import { connect } from 'node:net';

// 127.0.0.2 is loopback too, but a socket bound to 127.0.0.1 only does not take it, while one bound
// to every interface does: so tests see where a listener bound without leaving loopback.

/** Whether a TCP connection to host:port is accepted (a refused one answers false). */
export function acceptsTcp(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Whether UDP host:port is taken by another socket: one bound to every interface holds the port
 * on 127.0.0.2 too, one bound to 127.0.0.1 does not (binding the probe there then succeeds).
 */
export function udpTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createSocket('udp4');
    probe.once('error', (error: NodeJS.ErrnoException) => {
      probe.close();
      resolve(error.code === 'EADDRINUSE');
    });
    probe.bind(port, host, () => probe.close(() => resolve(false)));
  });
}
