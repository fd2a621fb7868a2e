import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { LiveSessions } from '../../session/index.js';
import { SrtConnection } from './connection.js';
import type { NativeEvent, NativeListener, SrtAddon } from './native.js';
import type { SrtChannels } from './contract.js';

export interface SrtServerOptions {
  addon: SrtAddon;
  /** `srt.passphrase`; '' = unencrypted, and encrypting callers are refused. */
  passphrase: string;
  /** `srt.token`; '' = none required. */
  token: string;
  /**
   * Encoder runs' own tokens, each for the resources its `{srt}` named; asked only when `token`
   * is set (stream-grants.ts). The handshake runs on libsrt's thread, so the addon keeps a copy:
   * `grantsChanged` brings it up to date.
   */
  grants?: { list(): ReadonlyArray<{ token: string; resources: readonly string[] }> };
  logger: Logger;
  /** The `srt` session collector's publishers and players; undefined when sessions are off. */
  sessions?: LiveSessions<SrtConnection>;
  /** Told when a publisher starts or stops (`publish`, `unpublish`) and a player joins or leaves. */
  onMedia?: (
    change: 'publish' | 'unpublish' | 'join' | 'leave',
    resource: string,
    remoteAddress: string,
  ) => void;
  /** Open connections at most; more are refused in the handshake. */
  maxConnections?: number;
}

const DEFAULT_MAX_CONNECTIONS = 1024;

/**
 * The SRT server (datarhei Core's `srt.Server`): callers publish or request a resource by stream
 * id, one publisher per resource, any number of players. The addon decides each handshake and
 * relays the media on its own thread; this side keeps the picture for the API, the sessions and
 * the log, and closes players that a session limit refuses.
 */
export class SrtServer {
  private listener: NativeListener | undefined;
  private readonly connections = new Map<number, SrtConnection>();
  private readonly publishers = new Map<string, SrtConnection>();
  private readonly players = new Map<string, Set<SrtConnection>>();
  private ticker: NodeJS.Timeout | undefined;

  constructor(private readonly options: SrtServerOptions) {}

  /** Listens on a UDP port (0 = a free one); resolves with the bound port. */
  async listen(host: string, port: number): Promise<number> {
    const numeric = host === '' || isIP(host) !== 0 ? host : (await lookup(host)).address;
    this.listener = new this.options.addon.Listener(
      {
        host: numeric,
        port,
        passphrase: this.options.passphrase,
        token: this.options.token,
        maxConnections: this.options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      },
      (event) => this.onEvent(event),
    );
    this.grantsChanged();
    this.ticker = setInterval(() => this.options.sessions?.tick(), 1000);
    this.ticker.unref();
    return this.listener.port();
  }

  /** Hands the runs' tokens as they are now to the listener's handshake. */
  grantsChanged(): void {
    if (this.options.grants !== undefined) this.listener?.setGrants(this.options.grants.list());
  }

  /** The bound UDP port, undefined before listen. */
  port(): number | undefined {
    return this.listener?.port();
  }

  /** Stops listening and ends every connection; their sessions close with their last bytes. */
  close(): void {
    clearInterval(this.ticker);
    const listener = this.listener;
    if (listener === undefined) return;
    for (const connection of this.connections.values()) connection.byteCounts();
    listener.close();
    this.listener = undefined;
    for (const connection of this.connections.values()) this.options.sessions?.closed(connection);
    this.connections.clear();
    this.publishers.clear();
    this.players.clear();
  }

  /** Resources being published now, oldest first. */
  resources(): string[] {
    return [...this.publishers.keys()];
  }

  /** GET /api/v3/srt: publishers and players by SRT socket id, with each connection's statistics. */
  channels(): SrtChannels {
    const answer: SrtChannels = { publisher: {}, subscriber: {}, connections: {}, log: {} };
    const listener = this.listener;
    if (listener === undefined) return answer;
    const describe = (connection: SrtConnection): boolean => {
      const stats = listener.stats(connection.socket);
      if (stats === undefined) return false;
      answer.connections[String(connection.socket)] = { log: {}, stats };
      return true;
    };
    for (const [resource, publisher] of this.publishers) {
      if (!describe(publisher)) continue;
      answer.publisher[resource] = publisher.socket;
      for (const player of this.players.get(resource) ?? []) {
        if (!describe(player)) continue;
        (answer.subscriber[resource] ??= []).push(player.socket);
      }
    }
    return answer;
  }

  private onEvent(event: NativeEvent): void {
    const listener = this.listener;
    if (listener === undefined) return;
    if (event.type === 'refused') {
      // The stream id is not logged: it may carry a near-miss of the token.
      this.log(event.peer, event.mode, event.resource, `refused (${event.code}): ${event.reason}`);
    } else if (event.type === 'accepted') {
      this.accepted(listener, event);
    } else {
      this.closed(event);
    }
  }

  private accepted(listener: NativeListener, event: NativeEvent): void {
    const mode = event.mode === 'publish' ? 'publish' : 'request';
    const connection = new SrtConnection(listener, event.socket, mode, event.resource, event.peer);
    if (mode === 'request') {
      const refusal = this.options.sessions?.refusal(connection.remoteAddress);
      if (refusal !== undefined) {
        this.log(event.peer, mode, event.resource, `refused: ${refusal}`);
        listener.closeSocket(event.socket, refusal);
        return;
      }
    }
    this.connections.set(event.socket, connection);
    if (mode === 'publish') {
      this.publishers.set(event.resource, connection);
    } else {
      let players = this.players.get(event.resource);
      if (players === undefined) this.players.set(event.resource, (players = new Set()));
      players.add(connection);
    }
    this.options.sessions?.opened(connection, mode === 'publish' ? 'publish' : 'play', event.resource);
    this.log(event.peer, mode, event.resource, 'start');
    this.options.onMedia?.(mode === 'publish' ? 'publish' : 'join', event.resource, connection.remoteAddress);
  }

  private closed(event: NativeEvent): void {
    const connection = this.connections.get(event.socket);
    if (connection === undefined) return;
    this.connections.delete(event.socket);
    connection.closedWith(event.bytesRead, event.bytesWritten);
    if (connection.mode === 'publish') {
      if (this.publishers.get(connection.resource) === connection)
        this.publishers.delete(connection.resource);
    } else {
      const players = this.players.get(connection.resource);
      players?.delete(connection);
      if (players?.size === 0) this.players.delete(connection.resource);
    }
    this.options.sessions?.closed(connection);
    this.options.onMedia?.(
      connection.mode === 'publish' ? 'unpublish' : 'leave',
      connection.resource,
      connection.remoteAddress,
    );
    this.log(connection.peer, connection.mode, connection.resource, `stop: ${event.reason}`);
  }

  private log(client: string, mode: string, resource: string, message: string): void {
    this.options.logger.info({ client, mode, resource }, `srt ${mode || 'connect'} ${message}`);
  }
}
