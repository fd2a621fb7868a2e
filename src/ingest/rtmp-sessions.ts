import type { RtmpConnection, RtmpSessionSink } from './rtmp/index.js';
import type { Session, SessionCollector } from '../session/index.js';
import { newSessionId, type IpIgnoreList } from '../session/index.js';

interface Counted {
  session: Session;
  /** Socket byte counters already counted, so each tick adds the difference. */
  read: number;
  written: number;
}

/**
 * Publishers and players as sessions of the `rtmp` collector (SPEC §9), as datarhei Core counts
 * them: one session per connection from `publish`/`play` on, `local` = `publish:/live/abc` or
 * `play:/live/abc`, reference = the stream name. Bytes are read from the socket counters once a
 * second (rx = what the peer sent, tx = what it was sent), which also keeps the session open.
 * Clients on `sessions.ip_ignorelist` are neither counted nor limited.
 */
export class RtmpSessions implements RtmpSessionSink {
  private readonly counted = new Map<RtmpConnection, Counted>();

  constructor(
    private readonly collector: SessionCollector,
    private readonly ignoreList: IpIgnoreList,
  ) {}

  opened(connection: RtmpConnection, mode: 'publish' | 'play', path: string): void {
    if (this.ignoreList.ignores(connection.remoteAddress)) return;
    const session = this.collector.open({
      id: newSessionId(),
      remote: connection.remoteAddress,
      local: `${mode}:${path}`,
      reference: path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]*$/, ''),
      active: true,
    });
    this.counted.set(connection, { session, read: 0, written: 0 });
    this.count(connection);
  }

  refusal(remoteAddress: string): string | undefined {
    if (this.ignoreList.ignores(remoteAddress)) return undefined;
    return this.collector.limitExceeded();
  }

  closed(connection: RtmpConnection): void {
    const counted = this.counted.get(connection);
    if (counted === undefined) return;
    this.count(connection);
    this.counted.delete(connection);
    this.collector.close(counted.session.id);
  }

  tick(): void {
    for (const connection of this.counted.keys()) this.count(connection);
  }

  private count(connection: RtmpConnection): void {
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
