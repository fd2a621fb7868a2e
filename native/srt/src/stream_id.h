// Parsing of SRT stream ids in the forms datarhei Core v16 accepts (see docs/ingest.md).
#pragma once

#include <string>

namespace srt_ingest {

struct StreamId {
  std::string resource;
  // "publish", "request", or whatever the caller wrote (refused later), "" when not given in the
  // "#!:" form.
  std::string mode;
  std::string token;
};

// "name[,mode:publish|request][,token:secret]" (keys in any order after the name, a value runs to
// the next ",mode:"/",token:"), or "#!:" / "#!::" followed by "m=…,r=…,token=…".
StreamId ParseStreamId(const std::string& text);

}  // namespace srt_ingest
