import type { MeteredConnection } from '../../session/index.js';
import type { NativeListener } from './native.js';

/** One accepted SRT caller, publisher or player, as the server keeps it. */
export class SrtConnection implements MeteredConnection {
  /** Byte totals as last read from libsrt (kept after the close for the last count). */
  private bytes = { bytesRead: 0, bytesWritten: 0 };

  constructor(
    private readonly listener: NativeListener,
    /** libsrt's socket id, the connection's key in GET /api/v3/srt. */
    readonly socket: number,
    readonly mode: 'publish' | 'request',
    readonly resource: string,
    /** `ip:port` as the addon wrote it. */
    readonly peer: string,
  ) {}

  /** The caller's IP address, without the port (for the ignore list and sessions). */
  get remoteAddress(): string {
    const colon = this.peer.lastIndexOf(':');
    const host = colon < 0 ? this.peer : this.peer.slice(0, colon);
    return host.startsWith('[') ? host.slice(1, -1) : host;
  }

  byteCounts(): { bytesRead: number; bytesWritten: number } {
    const stats = this.listener.stats(this.socket);
    if (stats !== undefined) this.bytes = { bytesRead: stats.recv_bytes, bytesWritten: stats.sent_bytes };
    return this.bytes;
  }

  /** The totals the addon reported with the close. */
  closedWith(bytesRead: number, bytesWritten: number): void {
    this.bytes = {
      bytesRead: Math.max(bytesRead, this.bytes.bytesRead),
      bytesWritten: Math.max(bytesWritten, this.bytes.bytesWritten),
    };
  }
}
