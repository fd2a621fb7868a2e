import { Type, type Static, type TNumber } from 'typebox';

/**
 * The wire shapes of GET /api/v3/srt (datarhei Core's `api.SRTChannels`), declared once: the SRT
 * server fills them (the types are derived from the schemas), the API description shows them
 * (src/ingest/contract.ts).
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

type StatisticsProperties = { [Name in keyof typeof SRT_STATISTICS_FIELDS]: TNumber };

/** datarhei Core's `api.SRTStatistics`: libsrt's counters since the connection opened. */
export const SrtStatistics = Type.Object(
  Object.fromEntries(
    Object.entries(SRT_STATISTICS_FIELDS).map(([name, description]) => [
      name,
      Type.Number({ minimum: 0, description }),
    ]),
  ) as StatisticsProperties,
  { title: 'SRTStatistics', additionalProperties: false },
);
export type SrtStatistics = Static<typeof SrtStatistics>;

/** datarhei Core's `api.SRTLog` (never filled here: libsrt's log is not collected). */
export const SrtLog = Type.Object(
  { ts: Type.Integer({ description: 'Unix milliseconds' }), msg: Type.Array(Type.String()) },
  { title: 'SRTLog' },
);
export type SrtLog = Static<typeof SrtLog>;

const SrtLogs = Type.Record(Type.String(), Type.Array(SrtLog));

/** One connection in GET /api/v3/srt: its statistics and its log (always empty, docs/ingest.md). */
export const SrtConnection = Type.Object({ log: SrtLogs, stats: SrtStatistics }, { title: 'SRTConnection' });
export type SrtConnection = Static<typeof SrtConnection>;

/** datarhei Core's `api.SRTChannels`: who publishes and plays what, by SRT socket id. */
export const SrtChannels = Type.Object(
  {
    publisher: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'resource → SRT socket id of its publisher',
    }),
    subscriber: Type.Record(Type.String(), Type.Array(Type.Integer({ minimum: 0 })), {
      description: 'resource → SRT socket ids of its players (absent without players)',
    }),
    connections: Type.Record(Type.String(), SrtConnection, {
      description: 'SRT socket id → the connection’s statistics',
    }),
    log: SrtLogs,
  },
  { title: 'SRTChannels', additionalProperties: false },
);
export type SrtChannels = Static<typeof SrtChannels>;
