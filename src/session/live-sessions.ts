import type { IpIgnoreList } from './ip-ignorelist.js';
import type { Session, SessionCollector } from './session-collector.js';
import { newSessionId } from './session-id.js';

/** A live-ingest connection whose bytes can be counted (an RTMP socket, an SRT socket). */
export interface MeteredConnection {
  readonly remoteAddress: string;
  /** Bytes received from and sent to the peer since the connection opened. */
  byteCounts(): { bytesRead: number; bytesWritten: number };
}

interface Counted {
  session: Session;
  /** Byte counters already counted, so each tick adds the difference. */
  read: number;
  written: number;
}

/**
 * Publishers and players of a live-ingest server as sessions of its collector (docs/sessions.md#the-contract), as
 * datarhei Core counts them: one session per connection from publish/play on, `local` =
 * `publish:<path>` or `play:<path>`, reference as the server names it. Bytes are read from the
 * connection's counters once a second (rx = what the peer sent, tx = what it was sent), which also
 * keeps the session open. Clients on `sessions.ip_ignorelist` are neither counted nor limited.
 */
export class LiveSessions<C extends MeteredConnection> {
  private readonly counted = new Map<C, Counted>();

  constructor(
    private readonly collector: SessionCollector,
    private readonly ignoreList: IpIgnoreList,
    private readonly referenceOf: (path: string) => string,
    /** `sessions.enable` as it is now: while false nothing is counted or limited. */
    private readonly enabled: () => boolean = () => true,
  ) {}

  opened(connection: C, mode: 'publish' | 'play', path: string): void {
    if (!this.enabled() || this.ignoreList.ignores(connection.remoteAddress)) return;
    const session = this.collector.open({
      id: newSessionId(),
      remote: connection.remoteAddress,
      local: `${mode}:${path}`,
      reference: this.referenceOf(path),
      active: true,
    });
    this.counted.set(connection, { session, read: 0, written: 0 });
    this.count(connection);
  }

  /** Why one more session would exceed a limit (`sessions.max_sessions`, …); undefined when none. */
  refusal(remoteAddress: string): string | undefined {
    if (!this.enabled() || this.ignoreList.ignores(remoteAddress)) return undefined;
    return this.collector.limitExceeded();
  }

  closed(connection: C): void {
    const counted = this.counted.get(connection);
    if (counted === undefined) return;
    this.count(connection);
    this.counted.delete(connection);
    this.collector.close(counted.session.id);
  }

  tick(): void {
    if (!this.enabled()) {
      // Turned off while running: the connections counted so far end their sessions now.
      for (const connection of [...this.counted.keys()]) this.closed(connection);
      return;
    }
    for (const connection of this.counted.keys()) this.count(connection);
  }

  private count(connection: C): void {
    const counted = this.counted.get(connection);
    if (counted === undefined) return;
    const { bytesRead, bytesWritten } = connection.byteCounts();
    const rx = bytesRead - counted.read;
    const tx = bytesWritten - counted.written;
    counted.read = bytesRead;
    counted.written = bytesWritten;
    if (rx > 0 || tx > 0) this.collector.countBytes(rx, tx, counted.session);
    this.collector.touch(counted.session, true);
  }
}
