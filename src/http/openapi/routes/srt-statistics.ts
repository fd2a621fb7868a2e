/**
 * The wire shape of GET /api/v3/srt (datarhei Core's `api.SRTChannels`), beside its description: the
 * SRT server (src/ingest/srt/) fills it, the API description names each field. Kept here, under
 * the description, so that the description does not import the ingest module.
 */
/**
 * The statistics of one SRT connection as datarhei Core's `api.SRTStatistics` names them
 * (GET /api/v3/srt), with what each counts. The addon fills them from libsrt's `srt_bstats`,
 * counted since the connection opened. libsrt does not count key-material packets: `send_km_pkt`
 * and `recv_km_pkt` stay 0.
 */
export const SRT_STATISTICS_FIELDS = {
  timestamp_ms: 'milliseconds since the socket was created',
  sent_pkt: 'DATA packets sent, retransmissions included',
  recv_pkt: 'DATA packets received, retransmissions included',
  sent_unique_pkt: 'unique DATA packets sent',
  recv_unique_pkt: 'unique DATA packets received in time and delivered',
  send_loss_pkt: 'packets reported lost at the sender',
  recv_loss_pkt: 'packets detected missing at the receiver',
  sent_retrans_pkt: 'packets retransmitted',
  recv_retran_pkts: 'retransmitted packets received',
  sent_ack_pkt: 'ACK control packets sent',
  recv_ack_pkt: 'ACK control packets received',
  sent_nak_pkt: 'NAK control packets sent',
  recv_nak_pkt: 'NAK control packets received',
  send_km_pkt: 'key-material packets sent (not counted by libsrt: 0)',
  recv_km_pkt: 'key-material packets received (not counted by libsrt: 0)',
  send_duration_us: 'microseconds the sender had data to send',
  send_drop_pkt: 'packets the sender dropped: too late, or refused by a full send buffer',
  recv_drop_pkt: 'packets the receiver dropped as too late',
  recv_undecrypt_pkt: 'packets that failed to decrypt',
  sent_bytes: 'bytes of sent_pkt',
  recv_bytes: 'bytes of recv_pkt',
  sent_unique_bytes: 'bytes of sent_unique_pkt',
  recv_unique_bytes: 'bytes of recv_unique_pkt',
  recv_loss_bytes: 'bytes of recv_loss_pkt (estimated)',
  sent_retrans_bytes: 'bytes of sent_retrans_pkt',
  send_drop_bytes: 'bytes dropped by the sender as too late',
  recv_drop_bytes: 'bytes of recv_drop_pkt',
  recv_undecrypt_bytes: 'bytes of recv_undecrypt_pkt',
  pkt_send_period_us: 'current minimum interval between sent packets, µs',
  flow_window_pkt: 'packets that may be in flight',
  flight_size_pkt: 'packets in flight',
  rtt_ms: 'smoothed round-trip time, ms',
  bandwidth_mbit: 'estimated link bandwidth, Mbit/s',
  avail_send_buf_bytes: 'free space in the send buffer',
  avail_recv_buf_bytes: 'free space in the receive buffer',
  max_bandwidth_mbit: 'transmission bandwidth limit, Mbit/s',
  mss_bytes: 'maximum segment size',
  send_buf_pkt: 'unacknowledged packets in the send buffer',
  send_buf_bytes: 'bytes of send_buf_pkt',
  send_buf_ms: 'timespan of the send buffer, ms',
  send_tsbpd_delay_ms: "the peer's timestamp-based delivery delay, ms",
  recv_buf_pkt: 'acknowledged packets in the receive buffer',
  recv_buf_bytes: 'bytes of recv_buf_pkt',
  recv_buf_ms: 'timespan of the receive buffer, ms',
  recv_tsbpd_delay_ms: 'timestamp-based delivery delay, ms',
  reorder_tolerance_pkt: 'packet reorder tolerance',
  pkt_recv_avg_belated_time_ms: 'average lateness of belated packets, ms',
} as const;

export type SrtStatistics = Record<keyof typeof SRT_STATISTICS_FIELDS, number>;

/** One connection in GET /api/v3/srt: its statistics and its log (always empty, docs/ingest.md). */
export interface SrtConnection {
  log: Record<string, SrtLog[]>;
  stats: SrtStatistics;
}

export interface SrtLog {
  /** Unix milliseconds. */
  ts: number;
  msg: string[];
}

/** datarhei Core's `api.SRTChannels`: who publishes and plays what, by SRT socket id. */
export interface SrtChannels {
  publisher: Record<string, number>;
  subscriber: Record<string, number[]>;
  connections: Record<string, SrtConnection>;
  log: Record<string, SrtLog[]>;
}
