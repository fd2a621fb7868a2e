import { Writable } from 'node:stream';
import { connect, type PeerCertificate, type TLSSocket } from 'node:tls';
import { pino, type Logger } from 'pino';

/** A logger whose lines the test reads (JSON objects, oldest first). */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

/**
 * A TLS connection that verifies the server against `ca` for `servername`, kept open so the test
 * can send HTTP/1.1 requests on it one after the other.
 */
export async function openVerified(
  url: string,
  ca: string | Buffer,
  servername: string,
): Promise<{ socket: TLSSocket; peer: PeerCertificate; get(path: string, host?: string): Promise<string> }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), ca, servername, ALPNProtocols: ['http/1.1'] });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    peer: socket.getPeerCertificate(),
    get: (path, host = servername) =>
      new Promise((resolve, reject) => {
        let text = '';
        const onError = (error: Error): void => reject(error);
        const onData = (chunk: Buffer): void => {
          text += chunk.toString();
          const [head = '', body = ''] = text.split('\r\n\r\n');
          const length = /content-length: (\d+)/i.exec(head);
          if (length !== null && Buffer.byteLength(body) >= Number(length[1])) {
            socket.off('data', onData);
            socket.off('error', onError);
            resolve(text);
          }
        };
        socket.on('data', onData);
        socket.once('error', onError);
        socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
      }),
  };
}
