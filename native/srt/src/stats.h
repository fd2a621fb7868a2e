#pragma once

#include <napi.h>
#include <srt.h>

namespace srt_ingest {

// libsrt's statistics of one socket under the names of datarhei Core's `api.SRTStatistics`
// (GET /api/v3/srt), counted since the socket was created.
Napi::Object StatsToObject(Napi::Env env, const SRT_TRACEBSTATS& s);

}  // namespace srt_ingest
