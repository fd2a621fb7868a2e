import { BitrateWindow } from './bitrate-window.js';
import { SessionHistory } from './history.js';

/** One client's use of the server, as one collector counts it. */
export interface Session {
  readonly id: string;
  /** Client address. */
  readonly remote: string;
  /** URL path the session is about (the playlist for HLS). */
  readonly local: string;
  /** What the session belongs to, e.g. the playlist's base name (the process id for `{processid}.m3u8`). */
  readonly reference: string;
  readonly createdAtMs: number;
  lastSeenMs: number;
  /** Pending sessions (an HLS viewer before its first segment) are not counted as active. */
  active: boolean;
  rxBytes: number;
  txBytes: number;
  readonly rx: BitrateWindow;
  readonly tx: BitrateWindow;
  readonly extra: Record<string, unknown>;
}

export interface SessionLimits {
  /** Concurrent active sessions (pending ones hold no slot); 0 = unlimited. */
  maxSessions: number;
  /** Egress, bit/s; 0 = unlimited. */
  maxTxBitrate: number;
  /** Ingress, bit/s; 0 = unlimited (no config key sets it yet). */
  maxRxBitrate: number;
}

export interface SessionCollectorOptions {
  now: () => number;
  /** An active session closes after this long without traffic, ms. */
  timeoutMs: number;
  /** A pending session is dropped after this long without becoming active, ms. */
  pendingTimeoutMs: number;
  limits: SessionLimits;
  /** Told when a session becomes active (`start`) and when an active one closes (`end`). */
  onChange?: (change: 'start' | 'end', session: Session) => void;
}

/** The values behind the `session_*` metrics of one collector (docs/sessions.md#the-contract). */
export interface CollectorStats {
  active: number;
  limit: number;
  maxRxBitrate: number;
  maxTxBitrate: number;
  rxBitrate: number;
  txBitrate: number;
  /** Including active sessions and earlier runs (persisted history). */
  rxBytes: number;
  txBytes: number;
  /** Closed sessions plus active ones. */
  total: number;
}

/**
 * One collector (`hls`, `hlsingress`, `http`, …): its open sessions, its history of closed ones,
 * byte totals and 10-second bitrate windows. Bytes are counted into the collector when they flow,
 * so totals grow while sessions are open; a session that closes moves into the history.
 */
export class SessionCollector {
  private readonly sessions = new Map<string, Session>();
  private activeCount = 0;
  /** Requests in flight, for collectors that count requests (`http`) rather than sessions. */
  private inFlight = 0;
  readonly history = new SessionHistory();
  private rxTotal = 0;
  private txTotal = 0;
  private readonly rxWindow: BitrateWindow;
  private readonly txWindow: BitrateWindow;

  constructor(
    readonly name: string,
    private readonly options: SessionCollectorOptions,
  ) {
    this.rxWindow = new BitrateWindow(options.now());
    this.txWindow = new BitrateWindow(options.now());
  }

  get limits(): SessionLimits {
    return this.options.limits;
  }

  open(init: {
    id: string;
    remote: string;
    local: string;
    reference: string;
    active: boolean;
    extra?: Record<string, unknown>;
  }): Session {
    const now = this.options.now();
    const session: Session = {
      ...init,
      extra: init.extra ?? {},
      createdAtMs: now,
      lastSeenMs: now,
      rxBytes: 0,
      txBytes: 0,
      rx: new BitrateWindow(now),
      tx: new BitrateWindow(now),
    };
    this.sessions.set(session.id, session);
    if (session.active) {
      this.activeCount++;
      this.options.onChange?.('start', session);
    }
    return session;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** Marks traffic on a session (keeps it open) and makes a pending one active. */
  touch(session: Session, activate: boolean): void {
    session.lastSeenMs = this.options.now();
    if (activate && !session.active) {
      session.active = true;
      this.activeCount++;
      this.options.onChange?.('start', session);
    }
  }

  /** Counts bytes into the collector (totals and bitrates) and, when given, into one session. */
  countBytes(rxBytes: number, txBytes: number, session?: Session): void {
    const now = this.options.now();
    this.rxTotal += rxBytes;
    this.txTotal += txBytes;
    if (rxBytes > 0) this.rxWindow.add(rxBytes, now);
    if (txBytes > 0) this.txWindow.add(txBytes, now);
    if (session !== undefined) this.countSessionBytes(session, rxBytes, txBytes);
  }

  /** Counts bytes into one session only (the collector already counted them). */
  countSessionBytes(session: Session, rxBytes: number, txBytes: number): void {
    const now = this.options.now();
    session.rxBytes += rxBytes;
    session.txBytes += txBytes;
    if (rxBytes > 0) session.rx.add(rxBytes, now);
    if (txBytes > 0) session.tx.add(txBytes, now);
  }

  /** One finished request of a request-counting collector: a session opened and closed at once. */
  countRequest(remote: string, local: string, rxBytes: number, txBytes: number): void {
    this.countBytes(rxBytes, txBytes);
    this.history.add(remote, local, '', rxBytes, txBytes);
  }

  requestStarted(): void {
    this.inFlight++;
  }

  requestEnded(): void {
    this.inFlight--;
  }

  close(id: string): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.sessions.delete(id);
    if (!session.active) return; // a pending session never became a session
    this.activeCount--;
    this.options.onChange?.('end', session);
    this.history.add(session.remote, session.local, session.reference, session.rxBytes, session.txBytes);
  }

  /** Closes sessions idle for longer than their timeout. Call about once a second. */
  sweep(): void {
    const now = this.options.now();
    for (const session of this.sessions.values()) {
      const timeout = session.active ? this.options.timeoutMs : this.options.pendingTimeoutMs;
      if (now - session.lastSeenMs > timeout) this.close(session.id);
    }
  }

  /** Closes every session (shutdown), so the history holds them before it is persisted. */
  closeAll(): void {
    for (const id of [...this.sessions.keys()]) this.close(id);
  }

  /** Which limit a new session would exceed, as a detail for the 509 answer; undefined when none. */
  limitExceeded(): string | undefined {
    const { maxSessions, maxTxBitrate } = this.options.limits;
    // Only active sessions hold a slot: a pending viewer (a playlist fetched, no media yet) costs
    // none, so a client that never plays cannot keep the others out (issue 24 item 11).
    if (maxSessions > 0 && this.activeCount >= maxSessions) {
      return `sessions.max_sessions: ${this.activeCount} of ${maxSessions} concurrent ${this.name} sessions in use`;
    }
    if (maxTxBitrate > 0) {
      const current = this.txWindow.bitrate(this.options.now());
      if (current >= maxTxBitrate) {
        return `sessions.max_bitrate_mbit: ${this.name} egress ${(current / 1048576).toFixed(2)} Mbit/s reached the limit of ${maxTxBitrate / 1048576} Mbit/s`;
      }
    }
    return undefined;
  }

  /** Adds a persisted history (at start): its sessions and bytes count into the totals. */
  loadHistory(data: unknown): { loaded: number; skipped: number } {
    const { rx_bytes: rxBefore, tx_bytes: txBefore } = this.history.total;
    const result = this.history.load(data);
    this.rxTotal += this.history.total.rx_bytes - rxBefore;
    this.txTotal += this.history.total.tx_bytes - txBefore;
    return result;
  }

  stats(): CollectorStats {
    const now = this.options.now();
    const { maxSessions, maxRxBitrate, maxTxBitrate } = this.options.limits;
    return {
      active: this.activeCount + this.inFlight,
      limit: maxSessions,
      maxRxBitrate,
      maxTxBitrate,
      rxBitrate: this.rxWindow.bitrate(now),
      txBitrate: this.txWindow.bitrate(now),
      rxBytes: this.rxTotal,
      txBytes: this.txTotal,
      total: this.history.total.sessions + this.activeCount,
    };
  }

  /** Active sessions (pending ones excluded), oldest first. */
  activeSessions(): Session[] {
    return [...this.sessions.values()].filter((session) => session.active);
  }
}
