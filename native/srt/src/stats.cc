#include "stats.h"

namespace srt_ingest {

Napi::Object StatsToObject(Napi::Env env, const SRT_TRACEBSTATS& s) {
  Napi::Object o = Napi::Object::New(env);
  auto set = [&](const char* name, double value) { o.Set(name, Napi::Number::New(env, value)); };
  set("timestamp_ms", static_cast<double>(s.msTimeStamp));
  // Accumulated. The interval counters are totals too: the stats are never cleared.
  set("sent_pkt", static_cast<double>(s.pktSentTotal));
  set("recv_pkt", static_cast<double>(s.pktRecvTotal));
  set("sent_unique_pkt", static_cast<double>(s.pktSentUniqueTotal));
  set("recv_unique_pkt", static_cast<double>(s.pktRecvUniqueTotal));
  set("send_loss_pkt", s.pktSndLossTotal);
  set("recv_loss_pkt", s.pktRcvLossTotal);
  set("sent_retrans_pkt", s.pktRetransTotal);
  set("recv_retran_pkts", s.pktRcvRetrans);
  set("sent_ack_pkt", s.pktSentACKTotal);
  set("recv_ack_pkt", s.pktRecvACKTotal);
  set("sent_nak_pkt", s.pktSentNAKTotal);
  set("recv_nak_pkt", s.pktRecvNAKTotal);
  // libsrt does not count key-material packets.
  set("send_km_pkt", 0);
  set("recv_km_pkt", 0);
  set("send_duration_us", static_cast<double>(s.usSndDurationTotal));
  set("send_drop_pkt", s.pktSndDropTotal);
  set("recv_drop_pkt", s.pktRcvDropTotal);
  set("recv_undecrypt_pkt", s.pktRcvUndecryptTotal);
  set("sent_bytes", static_cast<double>(s.byteSentTotal));
  set("recv_bytes", static_cast<double>(s.byteRecvTotal));
  set("sent_unique_bytes", static_cast<double>(s.byteSentUniqueTotal));
  set("recv_unique_bytes", static_cast<double>(s.byteRecvUniqueTotal));
  set("recv_loss_bytes", static_cast<double>(s.byteRcvLossTotal));
  set("sent_retrans_bytes", static_cast<double>(s.byteRetransTotal));
  set("send_drop_bytes", static_cast<double>(s.byteSndDropTotal));
  set("recv_drop_bytes", static_cast<double>(s.byteRcvDropTotal));
  set("recv_undecrypt_bytes", static_cast<double>(s.byteRcvUndecryptTotal));
  // Instantaneous.
  set("pkt_send_period_us", s.usPktSndPeriod);
  set("flow_window_pkt", s.pktFlowWindow);
  set("flight_size_pkt", s.pktFlightSize);
  set("rtt_ms", s.msRTT);
  set("bandwidth_mbit", s.mbpsBandwidth);
  set("avail_send_buf_bytes", s.byteAvailSndBuf);
  set("avail_recv_buf_bytes", s.byteAvailRcvBuf);
  set("max_bandwidth_mbit", s.mbpsMaxBW);
  set("mss_bytes", s.byteMSS);
  set("send_buf_pkt", s.pktSndBuf);
  set("send_buf_bytes", s.byteSndBuf);
  set("send_buf_ms", s.msSndBuf);
  set("send_tsbpd_delay_ms", s.msSndTsbPdDelay);
  set("recv_buf_pkt", s.pktRcvBuf);
  set("recv_buf_bytes", s.byteRcvBuf);
  set("recv_buf_ms", s.msRcvBuf);
  set("recv_tsbpd_delay_ms", s.msRcvTsbPdDelay);
  set("reorder_tolerance_pkt", s.pktReorderTolerance);
  set("pkt_recv_avg_belated_time_ms", s.pktRcvAvgBelatedTime);
  return o;
}

}  // namespace srt_ingest
