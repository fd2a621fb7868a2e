import type { HistoryEntry } from './history.js';
import type { SessionDto, SessionStatsDto, SessionSummaryDto } from './contract.js';
import type { Session, SessionCollector } from './session-collector.js';

const MIB = 1024 * 1024;

export function toSessionDto(session: Session, nowMs: number): SessionDto {
  return {
    id: session.id,
    reference: session.reference,
    created_at: Math.floor(session.createdAtMs / 1000),
    local: session.local,
    remote: session.remote,
    extra: session.extra,
    bytes_rx: session.rxBytes,
    bytes_tx: session.txBytes,
    bandwidth_rx_kbit: round3(session.rx.bitrate(nowMs) / 1024),
    bandwidth_tx_kbit: round3(session.tx.bitrate(nowMs) / 1024),
  };
}

export function toSummaryDto(collector: SessionCollector, nowMs: number): SessionSummaryDto {
  const stats = collector.stats();
  const list = collector.activeSessions().map((session) => toSessionDto(session, nowMs));
  const remote: SessionSummaryDto['summary']['remote'] = {};
  const local: Record<string, SessionStatsDto> = {};
  const reference: Record<string, SessionStatsDto> = {};
  for (const entry of collector.history.list()) {
    const peer = (remote[entry.remote] ??= { ...emptyStats(), local: {} });
    addTo(peer, entry);
    addTo((peer.local[entry.local] ??= emptyStats()), entry);
    addTo((local[entry.local] ??= emptyStats()), entry);
    addTo((reference[entry.reference] ??= emptyStats()), entry);
  }
  const total = collector.history.total;
  return {
    active: {
      list,
      sessions: list.length,
      bandwidth_rx_mbit: round3(stats.rxBitrate / MIB),
      bandwidth_tx_mbit: round3(stats.txBitrate / MIB),
      max_sessions: stats.limit,
      max_bandwidth_rx_mbit: round3(stats.maxRxBitrate / MIB),
      max_bandwidth_tx_mbit: round3(stats.maxTxBitrate / MIB),
    },
    summary: {
      ...statsOf(total.sessions, total.rx_bytes, total.tx_bytes),
      remote,
      local,
      reference,
    },
  };
}

function emptyStats(): SessionStatsDto {
  return statsOf(0, 0, 0);
}

function statsOf(sessions: number, rxBytes: number, txBytes: number): SessionStatsDto {
  return {
    sessions,
    traffic_rx_mb: Math.floor(rxBytes / MIB),
    traffic_tx_mb: Math.floor(txBytes / MIB),
    traffic_rx_bytes: rxBytes,
    traffic_tx_bytes: txBytes,
  };
}

function addTo(stats: SessionStatsDto, entry: HistoryEntry): void {
  stats.sessions += entry.sessions;
  stats.traffic_rx_bytes += entry.rx_bytes;
  stats.traffic_tx_bytes += entry.tx_bytes;
  stats.traffic_rx_mb = Math.floor(stats.traffic_rx_bytes / MIB);
  stats.traffic_tx_mb = Math.floor(stats.traffic_tx_bytes / MIB);
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
