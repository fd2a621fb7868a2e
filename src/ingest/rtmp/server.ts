import { timingSafeEqual } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { createCertificateServer, type ServedCertificate } from '../../tls/index.js';
import {
  RtmpConnection,
  type ConnectionHost,
  type ConnectionLimits,
  type PlayDecision,
  type PublishDecision,
} from './connection.js';
import { LiveStream, type RelayLimits } from './live-stream.js';
import { isUnderApp, parseStreamPath, type StreamPath } from './stream-path.js';

/** Where the server reports publishers and players (the `rtmp` session collector, or nothing). */
export interface RtmpSessionSink {
  /** A publisher or player started; undefined when it is not counted (ignore list) */
  opened(connection: RtmpConnection, mode: 'publish' | 'play', path: string): void;
  /** Why a new player would exceed a limit (`sessions.max_sessions`, …); undefined when none. */
  refusal(remoteAddress: string): string | undefined;
  closed(connection: RtmpConnection): void;
  /** Called every second with all connections, to count their bytes. */
  tick(connections: Iterable<RtmpConnection>): void;
}

export interface RtmpServerOptions {
  /** `rtmp.app`: publish paths must lie under it ('/' = anywhere). */
  app: string;
  /** `rtmp.token`; '' = none required. */
  token: string;
  /**
   * Encoder runs' own tokens, each for the paths its `{rtmp}` named; asked only when `token` is
   * set (stream-grants.ts).
   */
  grants?: { allows(token: string, path: string): boolean };
  logger: Logger;
  now: () => number;
  sessions?: RtmpSessionSink;
  connection?: Partial<ConnectionLimits>;
  relay?: Partial<RelayLimits>;
  /** A connection that has not published or played after this long, or a publisher silent this long, is closed, ms. */
  idleTimeoutMs?: number;
  /** Open connections at most; more are refused at accept. */
  maxConnections?: number;
  /** Told when a publisher starts or stops (`publish`, `unpublish`) and a player joins or leaves. */
  onMedia?: (change: 'publish' | 'unpublish' | 'join' | 'leave', path: string, remoteAddress: string) => void;
}

const DEFAULT_MAX_CONNECTIONS = 4096;
const DEFAULT_CONNECTION: ConnectionLimits = {
  maxCommandBytes: 64 * 1024,
  maxMediaBytes: 16 * 1024 * 1024,
  maxChunkStreams: 64,
  chunkSize: 4096,
};
const DEFAULT_RELAY: Omit<RelayLimits, 'chunkSize'> = {
  maxPlayerQueueBytes: 2 * 1024 * 1024,
  maxBehindMs: 10_000,
  maxGopBytes: 16 * 1024 * 1024,
};

/**
 * The RTMP server (datarhei Core's `rtmp.Server`): publishers push to `/<app>/<name>`, any number
 * of players pull the same path, one publisher per path. Plain and TLS listeners share one set of
 * streams. Nothing a peer sends can stop another stream: each connection is parsed on its own
 * bytes with bounded buffers, and the relay never waits for a player.
 */
export class RtmpServer implements ConnectionHost {
  private readonly streams = new Map<string, LiveStream>();
  private readonly publishers = new Map<LiveStream, RtmpConnection>();
  private readonly connections = new Set<RtmpConnection>();
  private readonly listeners: Server[] = [];
  private readonly connectionLimits: ConnectionLimits;
  private readonly relayLimits: RelayLimits;
  private readonly ticker: NodeJS.Timeout;

  constructor(private readonly options: RtmpServerOptions) {
    this.connectionLimits = { ...DEFAULT_CONNECTION, ...options.connection };
    this.relayLimits = { ...DEFAULT_RELAY, chunkSize: this.connectionLimits.chunkSize, ...options.relay };
    this.ticker = setInterval(() => this.tick(), 1000);
    this.ticker.unref();
  }

  /**
   * A reloaded `rtmp.app` and `rtmp.token`: asked of every publish and play from now on; the
   * streams already published or played keep running.
   */
  setAccess(access: { app: string; token: string }): void {
    this.options.app = access.app;
    this.options.token = access.token;
  }

  /** Paths being published now, e.g. `/live/abc` (GET /api/v3/rtmp). */
  channels(): string[] {
    return [...this.streams.keys()];
  }

  /** The ports the listeners are bound to, plain first (port 0 in the config picks a free one). */
  ports(): number[] {
    return this.listeners.map((server) => (server.address() as AddressInfo).port);
  }

  /**
   * The live stream a play request for `url` (`rtmp://…/<path>[?token=…]`) would get, token
   * checked as for a player; undefined when it is not published or the token is wrong.
   */
  playable(url: URL): LiveStream | undefined {
    const parsed = parseStreamPath('', `${url.pathname}${url.search}`, this.options.token !== '');
    if (parsed === undefined || !this.admits(parsed)) return undefined;
    return this.streams.get(parsed.path);
  }

  /** The live stream at a path (for tools and tests). */
  stream(path: string): LiveStream | undefined {
    return this.streams.get(path);
  }

  /**
   * Listens for plain RTMP, or RTMPS with the served certificate (and each one that replaces it)
   * when `certificate` is given; resolves with the bound address.
   */
  async listen(host: string, port: number, certificate?: ServedCertificate): Promise<AddressInfo> {
    const onSocket = (socket: Socket): void => this.accept(socket);
    const server =
      certificate === undefined ? createServer(onSocket) : createCertificateServer(certificate, onSocket);
    // Counts sockets still in their TLS handshake too, which `accept` does not see yet.
    server.maxConnections = this.options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: host === '' ? '::' : host, port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => this.options.logger.error({ err: error }, 'rtmp listener error'));
    this.listeners.push(server);
    return server.address() as AddressInfo;
  }

  /**
   * Stops listening on every address; the connections accepted keep running (a reload that moves
   * the listeners opens the new ones after this).
   */
  stopListening(): void {
    for (const server of this.listeners.splice(0)) server.close();
  }

  /** Stops listening and ends every connection (publishers first, so players see the end). */
  async close(): Promise<void> {
    clearInterval(this.ticker);
    const closing = this.listeners.map(
      (server) => new Promise<void>((resolve) => server.close(() => resolve())),
    );
    for (const connection of [...this.connections]) connection.close('server shutdown');
    await Promise.all(closing);
  }

  startPublish(connection: RtmpConnection, app: string, name: string): PublishDecision {
    const target = this.authorize(connection, app, name, 'publish');
    if (typeof target !== 'string') return { code: 'NetStream.Publish.BadName', ...target };
    if (!isUnderApp(target, this.options.app)) {
      this.log(connection, 'publish', target, 'forbidden: not under rtmp.app');
      return { code: 'NetStream.Publish.BadName', description: `${target} is not under ${this.options.app}` };
    }
    if (this.streams.has(target)) {
      this.log(connection, 'publish', target, 'conflict: already publishing');
      return { code: 'NetStream.Publish.BadName', description: `${target} is already being published` };
    }
    const stream = new LiveStream(target, this.relayLimits, this.options.now);
    this.streams.set(target, stream);
    this.publishers.set(stream, connection);
    this.options.sessions?.opened(connection, 'publish', target);
    this.log(connection, 'publish', target, 'start');
    this.options.onMedia?.('publish', target, connection.remoteAddress);
    return { stream };
  }

  startPlay(connection: RtmpConnection, app: string, name: string): PlayDecision {
    const target = this.authorize(connection, app, name, 'play');
    if (typeof target !== 'string') return { code: 'NetStream.Play.Failed', ...target };
    const stream = this.streams.get(target);
    if (stream === undefined) {
      this.log(connection, 'play', target, 'not found');
      return { code: 'NetStream.Play.StreamNotFound', description: `${target} is not being published` };
    }
    const refusal = this.options.sessions?.refusal(connection.remoteAddress);
    if (refusal !== undefined) {
      this.log(connection, 'play', target, `refused: ${refusal}`);
      return { code: 'NetStream.Play.Failed', description: refusal };
    }
    this.options.sessions?.opened(connection, 'play', target);
    this.log(connection, 'play', target, 'start');
    this.options.onMedia?.('join', target, connection.remoteAddress);
    return { stream };
  }

  closed(connection: RtmpConnection): void {
    if (!this.connections.delete(connection)) return;
    const stream = connection.stream;
    if (
      stream !== undefined &&
      connection.role === 'publisher' &&
      this.publishers.get(stream) === connection
    ) {
      this.publishers.delete(stream);
      this.streams.delete(stream.path);
      stream.end('publisher left');
      this.log(connection, 'publish', stream.path, `stop: ${connection.closeReason}`);
      this.options.onMedia?.('unpublish', stream.path, connection.remoteAddress);
    } else if (stream !== undefined && connection.role === 'player') {
      stream.removePlayer(connection);
      this.log(connection, 'play', stream.path, `stop: ${connection.closeReason}`);
      this.options.onMedia?.('leave', stream.path, connection.remoteAddress);
    }
    if (connection.role !== 'none') this.options.sessions?.closed(connection);
  }

  private accept(socket: Socket): void {
    if (this.connections.size >= (this.options.maxConnections ?? DEFAULT_MAX_CONNECTIONS)) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    this.connections.add(new RtmpConnection(socket, this, this.connectionLimits, this.options.now));
  }

  /** The path of a request with a valid token, or the refusal. */
  private authorize(
    connection: RtmpConnection,
    app: string,
    name: string,
    mode: 'publish' | 'play',
  ): string | { description: string } {
    const parsed = parseStreamPath(app, name, this.options.token !== '');
    if (parsed === undefined) {
      this.log(connection, mode, `${app}/${name}`, 'invalid name');
      return { description: 'invalid stream name' };
    }
    if (!this.admits(parsed)) {
      // The given token is not logged: it may be a near-miss of the real one.
      this.log(
        connection,
        mode,
        parsed.path,
        parsed.token === '' ? 'forbidden: no token' : 'forbidden: wrong token',
      );
      return { description: parsed.token === '' ? 'a token is required' : 'invalid token' };
    }
    return parsed.path;
  }

  /** Whether the token a request carried opens its path: `rtmp.token`, or a run's own for that path. */
  private admits(parsed: StreamPath): boolean {
    const token = this.options.token;
    if (token === '' || sameSecret(parsed.token, token)) return true;
    return this.options.grants?.allows(parsed.token, parsed.path) === true;
  }

  private tick(): void {
    const now = this.options.now();
    const idle = this.options.idleTimeoutMs ?? 30_000;
    for (const connection of [...this.connections]) {
      // Players may stay silent (they only read); anyone else must keep sending.
      if (connection.role !== 'player' && now - connection.lastReceiveMs > idle) connection.close('idle');
    }
    for (const stream of this.streams.values()) stream.sweep();
    this.options.sessions?.tick(this.connections);
  }

  private log(connection: RtmpConnection, mode: string, path: string, message: string): void {
    this.options.logger.info({ client: connection.remoteAddress, mode, path }, `rtmp ${mode} ${message}`);
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
