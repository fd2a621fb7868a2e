import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

export interface RawAnswer {
  status: number;
  /** The status line and header lines as sent, without the empty line. */
  head: string;
  /** Header names in lower case. */
  headers: Map<string, string>;
  body: string;
}

export interface RawConnectionOptions {
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The address the connection comes from (a network address, to be a client from beyond loopback). */
  localAddress?: string;
  /** TLS without checking the server's certificate (the tests' own self-signed one). */
  tls?: boolean;
}

/**
 * One keep-alive HTTP/1.1 connection on which a test writes requests as bytes (half a request, two
 * pipelined, a request begun before a reload) and reads the answers back in order. Every answer
 * of this server has a Content-Length.
 */
export class RawConnection {
  private buffered = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private ended = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
    // Once connected, an error (a reset) only ends the connection: `answer` reports that.
    socket.on('error', () => undefined);
  }

  static open(options: RawConnectionOptions): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const target = {
        host: options.host ?? '127.0.0.1',
        port: options.port,
        localAddress: options.localAddress,
      };
      const socket: Socket =
        options.tls === true
          ? connectTls({ ...target, rejectUnauthorized: false }, () => resolve(new RawConnection(socket)))
          : connect(target, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Writes `text` (one whole request) and reads its answer. */
  async request(text: string): Promise<RawAnswer> {
    this.write(text);
    return this.answer();
  }

  /** The next answer on the connection. */
  async answer(): Promise<RawAnswer> {
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buffered.toString('latin1', 0, end);
        const [statusLine = '', ...lines] = head.split('\r\n');
        const headers = new Map(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        const length = Number(headers.get('content-length') ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.toString('utf8', end + 4, end + 4 + length);
          this.buffered = this.buffered.subarray(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), head, headers, body };
        }
      }
      if (this.ended) throw new Error('the connection closed before a whole answer');
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}
