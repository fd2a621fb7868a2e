// streamcore's SRT ingest addon over libsrt (docs/ingest.md): the listener and the stream-id parser.
#include <napi.h>
#include <srt.h>
#include <syslog.h>

#include "listener.h"
#include "stream_id.h"

namespace {

Napi::Value ParseStreamId(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "parseStreamId(string)");
  const srt_ingest::StreamId id = srt_ingest::ParseStreamId(info[0].As<Napi::String>().Utf8Value());
  Napi::Object object = Napi::Object::New(env);
  object.Set("resource", id.resource);
  object.Set("mode", id.mode);
  object.Set("token", id.token);
  return object;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // libsrt keeps a reference count; its threads live as long as the process.
  if (srt_startup() < 0) throw Napi::Error::New(env, "srt_startup failed");
  // libsrt logs every refused handshake and lost peer on stderr; the server logs those itself.
  srt_setloglevel(LOG_CRIT);
  exports.Set("Listener", srt_ingest::Listener::Init(env));
  exports.Set("parseStreamId", Napi::Function::New(env, ParseStreamId));
  exports.Set("libsrtVersion", Napi::String::New(env, SRT_VERSION_STRING));
  return exports;
}

}  // namespace

NODE_API_MODULE(srt_ingest, Init)
