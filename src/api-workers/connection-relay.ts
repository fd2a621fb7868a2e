import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { scanRequestHead, type ScannedRequest } from './request-head.js';

export interface RelayDeps {
  /**
   * Whether this worker answers `request` (its head and whole body in `body`) itself; anything
   * else makes the connection the main process's from this request on.
   */
  answersHere(request: ScannedRequest, body: Buffer, socket: Socket): boolean | Promise<boolean>;
  /** The worker's HTTP server: takes the stream that carries this connection's answered requests. */
  serve(stream: Duplex): void;
  /** Sends the connection and the bytes read from it but not answered to the main process. */
  handOff(socket: Socket, unread: Buffer): void;
  /** Bodies longer than this (bytes) are the main process's (its 413). */
  maxBodyBytes: number;
  /** A connection with no request under way is closed after this long, ms (`api.timeouts.keepalive_sec`). */
  keepAliveMs: number;
  /** A request that stalls for this long closes its connection, ms (`api.timeouts.idle_sec`). */
  idleMs: number;
  /** Bumped on every config change: a stream of an older generation takes no new request. */
  generation: () => number;
}

/**
 * One connection an API worker accepted. It reads the requests itself, one head at a time
 * (request-head.ts), and passes each one it answers, bytes unchanged, to the worker's HTTP server
 * through a stream of its own. At the first request it does not answer it stops reading, waits
 * until every answer before it is written, and hands the socket with the unanswered bytes to the
 * main process, which serves the connection from then on. So a keep-alive connection may carry
 * any mix of requests, and each is answered by the process that holds what it needs.
 */
export class ConnectionRelay {
  private unread: Buffer = Buffer.alloc(0);
  private stream: Duplex | undefined;
  private streamGeneration = -1;
  /** Bytes the current stream carried each way (its `bytesRead`, `bytesWritten`). */
  private counts = { read: 0, written: 0 };
  /** Requests passed to the HTTP server whose answers are not written yet. */
  private answering = 0;
  /** Bytes written to the socket whose write callback has not come yet. */
  private writing = 0;
  private deciding = false;
  private handingOff = false;
  private closed = false;
  /** The socket's idle timeout now, ms. */
  private timeoutMs = -1;

  constructor(
    private readonly socket: Socket,
    private readonly deps: RelayDeps,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.unread = this.unread.length === 0 ? chunk : Buffer.concat([this.unread, chunk]);
      this.next();
    });
    socket.on('end', () => this.close());
    socket.on('error', () => this.close());
    socket.on('close', () => this.close());
    socket.on('timeout', () => socket.destroy());
    this.armTimeout(deps.keepAliveMs);
    // As node's HTTP server does for the sockets it accepts: an answer written in two pieces
    // (head, body) must not wait for the client's delayed ACK (40 ms). The option belongs to the
    // socket, so it holds in the main process too after a hand-off.
    socket.setNoDelay(true);
  }

  /** The HTTP server wrote the whole answer of one request. */
  answered(): void {
    this.answering--;
    this.settle();
  }

  private next(): void {
    while (!this.deciding && !this.handingOff && !this.closed) {
      const scan = scanRequestHead(this.unread);
      if (scan.kind === 'incomplete') {
        this.armTimeout(this.unread.length === 0 ? this.deps.keepAliveMs : this.deps.idleMs);
        return;
      }
      if (scan.kind === 'unsure' || scan.bodyLength > this.deps.maxBodyBytes) {
        this.startHandOff();
        return;
      }
      const length = scan.headLength + scan.bodyLength;
      if (this.unread.length < length) {
        this.armTimeout(this.deps.idleMs);
        return;
      }
      const bytes = this.unread.subarray(0, length);
      const verdict = this.deps.answersHere(scan, bytes.subarray(scan.headLength), this.socket);
      if (verdict === true) this.answer(bytes);
      else if (verdict === false) this.startHandOff();
      else {
        this.deciding = true;
        verdict.then(
          (here) => {
            this.deciding = false;
            if (here) this.answer(bytes);
            else this.startHandOff();
            this.next();
          },
          () => {
            this.deciding = false;
            this.startHandOff();
          },
        );
      }
    }
  }

  private answer(bytes: Buffer): void {
    this.unread = this.unread.subarray(bytes.length);
    const stream = this.currentStream();
    this.answering++;
    this.counts.read += bytes.length;
    stream.push(bytes);
  }

  /** The stream to the HTTP server, a new one after a config change (the old one keeps its answers). */
  private currentStream(): Duplex {
    const generation = this.deps.generation();
    // Answers still under way keep their stream: a new one now could overtake them.
    if (this.stream === undefined || (this.streamGeneration !== generation && this.answering === 0)) {
      this.stream?.push(null);
      this.stream = this.openStream();
      this.streamGeneration = generation;
      this.deps.serve(this.stream);
    }
    return this.stream;
  }

  private openStream(): Duplex {
    const socket = this.socket;
    const counts = { read: 0, written: 0 };
    this.counts = counts;
    const stream = new Duplex({
      read: () => undefined,
      write: (chunk: Buffer, _encoding, callback) => {
        if (this.closed) return callback();
        // The pieces of one answer written in this turn leave in one segment.
        if (socket.writableCorked === 0) {
          socket.cork();
          process.nextTick(() => socket.uncork());
        }
        this.writeOut([chunk], counts, callback);
      },
      // The HTTP server corks its socket for an answer's head and body (a Buffer body is a piece
      // of its own): they reach the kernel in one writev, as on a socket of its own. Without this
      // the stream wrote them one at a time, each in a syscall after the previous one's callback,
      // and the client was woken by a head without its body (the worker's metric answers cost
      // 1.8× the main process's, issue 31).
      writev: (chunks: { chunk: Buffer }[], callback) => {
        if (this.closed) return callback();
        socket.cork();
        this.writeOut(
          chunks.map(({ chunk }) => chunk),
          counts,
          callback,
        );
        socket.uncork();
      },
      // The HTTP server ends a connection (`Connection: close`, HTTP/1.0) once its answer is out.
      final: (callback) => {
        if (stream === this.stream && !this.handingOff) socket.end();
        callback();
      },
    });
    // What fastify, node and the traffic meter read of a connection: the client's address, the
    // server's end, and the bytes this stream carried (the requests given to it, its answers).
    Object.defineProperties(stream, {
      remoteAddress: { value: socket.remoteAddress },
      remotePort: { value: socket.remotePort },
      remoteFamily: { value: socket.remoteFamily },
      localAddress: { value: socket.localAddress },
      localPort: { value: socket.localPort },
      bytesRead: { get: () => counts.read },
      bytesWritten: { get: () => counts.written },
    });
    stream.on('error', () => undefined);
    return stream;
  }

  /**
   * Writes `chunks` to the socket; `done` once the socket wrote the last of them, not before: the
   * HTTP server's 'finish' then means, as on a socket of its own, that the bytes are with the
   * kernel (the metrics answers reuse their memory from then on).
   */
  private writeOut(chunks: Buffer[], counts: { written: number }, done: () => void): void {
    if (chunks.length === 0) return done();
    this.writing++;
    const last = chunks.length - 1;
    chunks.forEach((chunk, index) => {
      counts.written += chunk.length;
      if (index < last) this.socket.write(chunk);
      else
        this.socket.write(chunk, () => {
          this.writing--;
          done();
          this.settle();
        });
    });
  }

  /**
   * The socket's idle timeout, set only when it changes: node restarts it on every read and write
   * by itself, while each `setTimeout` makes a new timer (about 0.6 µs a request).
   */
  private armTimeout(ms: number): void {
    if (ms === this.timeoutMs) return;
    this.timeoutMs = ms;
    this.socket.setTimeout(ms);
  }

  private startHandOff(): void {
    if (this.handingOff || this.closed) return;
    this.handingOff = true;
    this.socket.pause();
    this.settle();
  }

  /** Hands the socket over once nothing of this process is left to write on it. */
  private settle(): void {
    if (!this.handingOff || this.closed || this.answering > 0 || this.writing > 0) return;
    if (this.socket.writableLength > 0) return;
    const rest: Buffer[] = [this.unread];
    for (let chunk = this.readBuffered(); chunk !== null; chunk = this.readBuffered()) rest.push(chunk);
    // Reading stops in the kernel's buffer (nothing arrives between these synchronous lines): what
    // is not read yet travels with the descriptor.
    const handle = (this.socket as unknown as { _handle?: { readStop?: () => number } })._handle;
    handle?.readStop?.();
    this.closed = true;
    this.stream?.push(null);
    this.socket.removeAllListeners('data');
    this.socket.removeAllListeners('timeout');
    this.socket.setTimeout(0);
    this.deps.handOff(this.socket, Buffer.concat(rest));
  }

  private readBuffered(): Buffer | null {
    return this.socket.read() as Buffer | null;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream?.destroy();
    this.socket.destroy();
  }
}
