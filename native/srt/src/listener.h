// An SRT listener whose connections are accepted or refused by stream id in libsrt's handshake
// callback, and whose publishers are relayed to their players on a thread of its own, so neither
// the handshake nor the media ever waits for Node's event loop. JavaScript gets events (accepted,
// refused, closed) through a thread-safe function and asks for statistics or closes sockets.
#pragma once

#include <napi.h>
#include <srt.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace srt_ingest {

struct ListenerOptions {
  std::string host;  // numeric IPv4/IPv6 address, "" = every interface
  int port = 0;
  std::string passphrase;  // "" = no encryption; callers must then not encrypt either
  std::string token;       // "" = none required
  size_t max_connections = 1024;
};

struct Event {
  std::string type;  // "accepted", "refused", "closed"
  SRTSOCKET socket = SRT_INVALID_SOCK;
  std::string mode;  // "publish" or "request"
  std::string resource;
  std::string stream_id;
  std::string peer;  // "ip:port" ("[ip]:port" for IPv6)
  std::string reason;
  int code = 0;  // SRT_REJX_* for refusals
  // For "closed": the byte totals at the close, so the last second is counted too.
  double bytes_read = 0;
  double bytes_written = 0;
};

// The state libsrt's threads and the relay thread share. Never freed: libsrt may still be inside
// the handshake callback with a pointer to it while the listener closes, and it is a few hundred
// bytes per listener (see Listener::Close).
class Core {
 public:
  Core(ListenerOptions options, Napi::ThreadSafeFunction events);
  // Binds and listens; throws std::runtime_error with libsrt's reason.
  void Start();
  void Close();
  int Port();
  void CloseSocket(SRTSOCKET socket, const std::string& reason);
  // False when the socket is not one of this listener's connections.
  bool Stats(SRTSOCKET socket, SRT_TRACEBSTATS* stats, uint64_t* dropped);
  // Encoder runs' own tokens, each with the resources it opens; replaces the ones before.
  void SetGrants(std::vector<std::pair<std::string, std::vector<std::string>>> grants);

  static int HandshakeHook(void* opaque, SRTSOCKET socket, int hs_version, const sockaddr* peer,
                           const char* stream_id);

 private:
  struct Channel {
    std::string resource;
    std::vector<SRTSOCKET> players;
  };

  void Run();
  void AcceptPending();
  void Relay(SRTSOCKET publisher);
  void Drain(SRTSOCKET player);
  // Caller holds mutex_.
  void CloseLocked(SRTSOCKET socket, const std::string& reason);
  // Caller holds mutex_; closes one socket and reports it with its byte totals.
  void CloseAndReport(SRTSOCKET socket, const std::string& reason);
  void Post(Event event);
  // Caller holds mutex_; whether `token` is a run's own token for `resource`.
  bool GrantAllowsLocked(const std::string& token, const std::string& resource) const;
  // 0 to accept, else an SRT_REJX_* code with the reason; `mode` is what the caller asked for.
  int Decide(int hs_version, const std::string& stream_id, const std::string& peer,
             std::string* mode, std::string* reason);

  const ListenerOptions options_;
  Napi::ThreadSafeFunction events_;
  SRTSOCKET listener_ = SRT_INVALID_SOCK;
  int epoll_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  bool events_open_ = true;

  std::mutex mutex_;
  std::map<std::string, SRTSOCKET> live_;     // resource -> publisher
  std::map<SRTSOCKET, Channel> channels_;     // publisher -> its channel
  std::map<SRTSOCKET, SRTSOCKET> player_of_;  // player -> publisher
  std::map<SRTSOCKET, uint64_t> dropped_;     // player -> packets its full send buffer refused
  std::vector<std::pair<std::string, std::vector<std::string>>> grants_;  // token -> resources
};

class Listener : public Napi::ObjectWrap<Listener> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit Listener(const Napi::CallbackInfo& info);
  ~Listener() override;

 private:
  Napi::Value Port(const Napi::CallbackInfo& info);
  Napi::Value CloseSocket(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value SetGrants(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  Core* core_ = nullptr;
  bool closed_ = false;
};

}  // namespace srt_ingest
