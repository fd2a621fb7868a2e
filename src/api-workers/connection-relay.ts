import type { Socket } from 'node:net';
import { scanRequestHead, type ScannedRequest } from './request-head.js';

export interface RelayDeps {
  /**
   * Whether this worker answers `request` (its head and whole body in `body`) itself; anything
   * else makes the connection the main process's from this request on.
   */
  answersHere(request: ScannedRequest, body: Buffer, socket: Socket): boolean | Promise<boolean>;
  /**
   * Answers `request` on `socket` (socket-exchange.ts) and calls `ended` once the answer is with
   * the kernel, with whether the connection goes on.
   */
  serve(request: ScannedRequest, body: Buffer, socket: Socket, ended: (keepAlive: boolean) => void): void;
  /** Sends the connection and the bytes read from it but not answered to the main process. */
  handOff(socket: Socket, unread: Buffer): void;
  /** Bodies longer than this (bytes) are the main process's (its 413). */
  maxBodyBytes: number;
  /** A connection with no request under way is closed after this long, ms (`api.timeouts.keepalive_sec`). */
  keepAliveMs: number;
  /** A request that stalls for this long closes its connection, ms (`api.timeouts.idle_sec`). */
  idleMs: number;
}

/** Unread bytes past which a connection stops reading while an answer is under way (pipelining). */
const MAX_UNREAD_WHILE_ANSWERING = 64 * 1024;

/**
 * One connection an API worker accepted. It reads the requests itself, one head at a time
 * (request-head.ts), and has the worker's HTTP server answer each one it answers on the socket,
 * one after the other. At the first request it does not answer it stops reading, waits until the
 * answer before it is written, and hands the socket with the unanswered bytes to the main
 * process, which serves the connection from then on. So a keep-alive connection may carry any mix
 * of requests, and each is answered by the process that holds what it needs.
 */
export class ConnectionRelay {
  private unread: Buffer = Buffer.alloc(0);
  /** An answer is under way: the next request waits for it (pipelined requests are answered in order). */
  private answering = false;
  private deciding = false;
  /** The client ended its side: no request comes after the ones read. */
  private clientEnded = false;
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
      if (this.answering && this.unread.length > MAX_UNREAD_WHILE_ANSWERING) socket.pause();
      this.next();
    });
    // The client may end its side once it has sent its requests (a half-close): they are still
    // answered, as node's HTTP server answers them, and then the connection ends.
    socket.allowHalfOpen = true;
    socket.on('end', () => {
      this.clientEnded = true;
      this.next();
    });
    socket.on('error', () => this.close());
    socket.on('close', () => this.close());
    socket.on('timeout', () => socket.destroy());
    this.armTimeout(deps.keepAliveMs);
    // As node's HTTP server does for the sockets it accepts: an answer written in two pieces
    // (head, body) must not wait for the client's delayed ACK (40 ms). The option belongs to the
    // socket, so it holds in the main process too after a hand-off.
    socket.setNoDelay(true);
  }

  private next(): void {
    while (!this.answering && !this.deciding && !this.handingOff && !this.closed) {
      const scan = scanRequestHead(this.unread);
      if (scan.kind === 'incomplete' && this.clientEnded) {
        // Nothing more will come: a request cut short is the main process's to answer (its
        // parser's error), and with none the connection ends once the answers are out.
        if (this.unread.length > 0) this.startHandOff();
        else this.endConnection();
        return;
      }
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
      if (verdict === true) this.answer(scan, bytes);
      else if (verdict === false) this.startHandOff();
      else {
        this.deciding = true;
        verdict.then(
          (here) => {
            this.deciding = false;
            if (here) this.answer(scan, bytes);
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

  private answer(request: ScannedRequest, bytes: Buffer): void {
    this.unread = this.unread.subarray(bytes.length);
    this.answering = true;
    this.deps.serve(request, bytes.subarray(request.headLength), this.socket, (keepAlive) => {
      this.answering = false;
      // `Connection: close`: the HTTP server ends the connection once the answer is out.
      if (!keepAlive) {
        this.closed = true;
        return;
      }
      if (this.handingOff) return this.settle();
      if (this.socket.isPaused()) this.socket.resume();
      this.next();
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
    if (!this.handingOff || this.closed || this.answering) return;
    if (this.socket.writableLength > 0) {
      this.socket.once('drain', () => this.settle());
      return;
    }
    const rest: Buffer[] = [this.unread];
    for (let chunk = this.readBuffered(); chunk !== null; chunk = this.readBuffered()) rest.push(chunk);
    // Reading stops in the kernel's buffer (nothing arrives between these synchronous lines): what
    // is not read yet travels with the descriptor.
    const handle = (this.socket as unknown as { _handle?: { readStop?: () => number } })._handle;
    handle?.readStop?.();
    this.closed = true;
    this.socket.removeAllListeners('data');
    this.socket.removeAllListeners('timeout');
    this.socket.setTimeout(0);
    this.deps.handOff(this.socket, Buffer.concat(rest));
  }

  private readBuffered(): Buffer | null {
    return this.socket.read() as Buffer | null;
  }

  /** Ends this side once the written answers are out (FIN); the socket closes when both ends did. */
  private endConnection(): void {
    this.closed = true;
    this.socket.end();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
  }
}
