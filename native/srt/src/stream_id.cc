#include "stream_id.h"

#include <map>

namespace srt_ingest {
namespace {

struct KeyMatch {
  size_t comma;        // position of the ',' that starts ",token:" or ",mode:"
  std::string key;     // "token" or "mode"
  size_t value_start;  // first byte of the value
  size_t value_end;    // one past its last byte (a value stops at a newline, as Go's '.')
};

// The leftmost ",token:" or ",mode:" followed by at least one byte other than '\n', as the
// reference's regular expression `,(token|mode):(.+)` finds it.
bool FindKey(const std::string& text, KeyMatch* match) {
  for (size_t comma = text.find(','); comma != std::string::npos; comma = text.find(',', comma + 1)) {
    for (const char* key : {"token", "mode"}) {
      const std::string prefix = std::string(",") + key + ":";
      if (text.compare(comma, prefix.size(), prefix) != 0) continue;
      const size_t start = comma + prefix.size();
      const size_t end = std::min(text.find('\n', start), text.size());
      if (end == start) continue;
      *match = KeyMatch{comma, key, start, end};
      return true;
    }
  }
  return false;
}

StreamId ParseKeyValueForm(std::string text) {
  StreamId id;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(start, comma - start);
    const size_t equals = part.find('=');
    if (equals != std::string::npos) {
      const std::string key = part.substr(0, equals);
      const std::string value = part.substr(equals + 1);
      if (key == "m") id.mode = value;
      if (key == "r") id.resource = value;
      if (key == "token") id.token = value;
    }
    start = comma + 1;
  }
  return id;
}

}  // namespace

StreamId ParseStreamId(const std::string& text) {
  if (text.rfind("#!:", 0) == 0) {
    // The SRT access-control form is "#!::"; the reference strips only "#!:", which loses the
    // first key of a standard id. Both are accepted here.
    const size_t skip = text.rfind("#!::", 0) == 0 ? 4 : 3;
    return ParseKeyValueForm(text.substr(skip));
  }
  std::map<std::string, std::string> values;
  std::string rest = text;
  std::string key;
  size_t resource_end = std::string::npos;
  KeyMatch match;
  while (FindKey(rest, &match)) {
    if (resource_end == std::string::npos) resource_end = match.comma;
    if (!key.empty()) values[key] = rest.substr(0, match.comma);
    key = match.key;
    rest = rest.substr(match.value_start, match.value_end - match.value_start);
    values[key] = rest;
  }
  StreamId id;
  id.resource = resource_end == std::string::npos ? text : text.substr(0, resource_end);
  id.token = values.count("token") ? values["token"] : "";
  id.mode = values.count("mode") ? values["mode"] : "request";
  return id;
}

}  // namespace srt_ingest
