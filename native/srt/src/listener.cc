// The listener's core and its JavaScript wrapper. Kept in one file past the usual ~300 lines on
// purpose: every method here touches state shared by three threads (libsrt's receiving thread in
// the handshake hook, the relay thread, Node's thread), and the locking is only checkable when
// all of them are read side by side (all under mutex_, events posted in order while holding it).
#include "listener.h"

#include <access_control.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "stats.h"
#include "stream_id.h"

namespace srt_ingest {
namespace {

constexpr int kEpollTimeoutMs = 100;
constexpr int kMaxEvents = 64;
// Messages read from one publisher per wake-up before others get their turn (level-triggered
// epoll brings it back).
constexpr int kMaxReadsPerWake = 256;
// Live mode's largest payload (MSS 1500 minus IP, UDP and SRT headers).
constexpr int kMaxPayload = 1456;
// libsrt sizes a connection's receive loss list by its flight window (SRTO_FC, default 25 600
// packets, 16 bytes each, all touched when the connection opens) although what it advertises, and
// so what can be in flight, is the smaller receive buffer (SRTO_RCVBUF, default 8 192 packets).
// The same 8 192 here keeps every window as it was and 275 KB per connection off the RSS.
constexpr int kFlightPackets = 8192;
// A player sends us control packets only: its receive buffer and loss list need no room for
// media. libsrt's minimum is 32 packets.
constexpr int kPlayerReceivePackets = 64;
// What libsrt counts one packet of SRTO_RCVBUF as: MSS 1500 minus the IP and UDP headers.
constexpr int kPacketBytes = 1500 - 28;

// libsrt's message, with the system's reason when there is one ("Address already in use").
std::string LastError() {
  int system_error = 0;
  srt_getlasterror(&system_error);
  std::string message = srt_getlasterror_str();
  if (system_error != 0) message += std::string(" (") + std::strerror(system_error) + ")";
  return message;
}

// "ip:port", "[ip]:port" for IPv6; IPv4-mapped IPv6 addresses are written as IPv4.
std::string FormatAddress(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address == nullptr) return "";
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(v4->sin_port));
  }
  if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    const int port = ntohs(v6->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
      inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], text, sizeof text);
      return std::string(text) + ":" + std::to_string(port);
    }
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(port);
  }
  return "";
}

bool SameSecret(const std::string& given, const std::string& expected) {
  if (given.size() != expected.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < given.size(); i++) difference |= given[i] ^ expected[i];
  return difference == 0;
}

void SetFlag(SRTSOCKET socket, SRT_SOCKOPT option, const void* value, int size, const char* name) {
  if (srt_setsockflag(socket, option, value, size) == SRT_ERROR) {
    throw std::runtime_error(std::string(name) + ": " + LastError());
  }
}

// A player's socket: a receive window of kPlayerReceivePackets (what it needs for the player's
// acknowledgements), so that its receive buffer and loss list are a few KB instead of ~540 KB.
// Best effort: a socket that refuses keeps libsrt's sizes and works as before.
void ShrinkReceiveSide(SRTSOCKET socket) {
  const int packets = kPlayerReceivePackets;
  const int bytes = kPlayerReceivePackets * kPacketBytes;
  srt_setsockflag(socket, SRTO_FC, &packets, sizeof packets);
  srt_setsockflag(socket, SRTO_RCVBUF, &bytes, sizeof bytes);
}

}  // namespace

Core::Core(ListenerOptions options, Napi::ThreadSafeFunction events)
    : options_(std::move(options)), events_(std::move(events)) {}

void Core::Start() {
  sockaddr_storage address{};
  int address_size = 0;
  const bool any = options_.host.empty();
  const std::string host = any ? "::" : options_.host;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(options_.port);
    address_size = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(options_.port);
    address_size = sizeof(sockaddr_in6);
  } else {
    throw std::runtime_error("not a numeric IP address: " + host);
  }

  listener_ = srt_create_socket();
  if (listener_ == SRT_INVALID_SOCK) throw std::runtime_error("create socket: " + LastError());
  try {
    const int no = 0;
    const int yes = 1;
    const int transtype = SRTT_LIVE;
    const int payload = kMaxPayload;
    SetFlag(listener_, SRTO_TRANSTYPE, &transtype, sizeof transtype, "transtype");
    // Non-blocking, inherited by accepted sockets: the relay thread never waits on one peer.
    SetFlag(listener_, SRTO_RCVSYN, &no, sizeof no, "rcvsyn");
    SetFlag(listener_, SRTO_SNDSYN, &no, sizeof no, "sndsyn");
    // One SRT listener per UDP port: a second one in this process must fail like a foreign one.
    SetFlag(listener_, SRTO_REUSEADDR, &no, sizeof no, "reuseaddr");
    SetFlag(listener_, SRTO_PAYLOADSIZE, &payload, sizeof payload, "payloadsize");
    const int flight = kFlightPackets;
    SetFlag(listener_, SRTO_FC, &flight, sizeof flight, "fc");
    SetFlag(listener_, SRTO_ENFORCEDENCRYPTION, &yes, sizeof yes, "enforcedencryption");
    if (!options_.passphrase.empty()) {
      SetFlag(listener_, SRTO_PASSPHRASE, options_.passphrase.data(),
              static_cast<int>(options_.passphrase.size()), "passphrase");
    }
    if (address.ss_family == AF_INET6) {
      // Dual stack on "::" so IPv4 callers reach the default ":6000" too.
      const int v6only = any ? 0 : 1;
      SetFlag(listener_, SRTO_IPV6ONLY, &v6only, sizeof v6only, "ipv6only");
    }
    if (srt_bind(listener_, reinterpret_cast<sockaddr*>(&address), address_size) == SRT_ERROR) {
      throw std::runtime_error(LastError());
    }
    if (srt_listen_callback(listener_, &Core::HandshakeHook, this) == SRT_ERROR) {
      throw std::runtime_error("listen callback: " + LastError());
    }
    if (srt_listen(listener_, 64) == SRT_ERROR) throw std::runtime_error(LastError());
    epoll_ = srt_epoll_create();
    if (epoll_ < 0) throw std::runtime_error("epoll: " + LastError());
    const int flags = SRT_EPOLL_IN | SRT_EPOLL_ERR;
    if (srt_epoll_add_usock(epoll_, listener_, &flags) == SRT_ERROR) {
      throw std::runtime_error("epoll: " + LastError());
    }
  } catch (...) {
    if (epoll_ >= 0) srt_epoll_release(epoll_);
    srt_close(listener_);
    listener_ = SRT_INVALID_SOCK;
    throw;
  }
  thread_ = std::thread([this] { Run(); });
}

int Core::Port() {
  sockaddr_storage address{};
  int size = sizeof address;
  if (srt_getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) == SRT_ERROR) return 0;
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
}

int Core::HandshakeHook(void* opaque, SRTSOCKET socket, int hs_version, const sockaddr* peer,
                        const char* stream_id) {
  // Runs on libsrt's receiving thread: decides from the state at hand, never waits for Node.
  auto* core = static_cast<Core*>(opaque);
  const std::string id = stream_id == nullptr ? "" : stream_id;
  const std::string from = FormatAddress(peer);
  std::string reason;
  std::string mode;
  const int code = core->Decide(hs_version, id, from, &mode, &reason);
  if (code == 0) {
    // Options set here apply to the accepted socket: libsrt sizes its buffers after this hook.
    if (mode == "request") ShrinkReceiveSide(socket);
    return 0;
  }
  // The caller learns the code; libsrt closes the refused socket.
  srt_setrejectreason(socket, code);
  return -1;
}

int Core::Decide(int hs_version, const std::string& stream_id, const std::string& peer,
                 std::string* mode, std::string* reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  StreamId id;
  int code = 0;
  if (hs_version < 5) {
    // Callers without stream ids (handshake v4) publish under their address, as the reference.
    id.mode = "publish";
    id.resource = peer;
  } else {
    id = ParseStreamId(stream_id);
  }
  if (stopping_) {
    code = SRT_REJX_DOWN, *reason = "server is closing";
  } else if (id.resource.empty()) {
    code = SRT_REJX_BAD_REQUEST, *reason = "stream resource not provided";
  } else if (id.mode != "publish" && id.mode != "request") {
    code = SRT_REJX_BAD_MODE, *reason = "invalid connection mode";
  } else if (!options_.token.empty() && !SameSecret(id.token, options_.token) &&
             !GrantAllowsLocked(id.token, id.resource)) {
    code = SRT_REJX_UNAUTHORIZED, *reason = id.token.empty() ? "token required" : "invalid token";
  } else if (id.mode == "publish" && live_.count(id.resource) != 0) {
    code = SRT_REJX_CONFLICT, *reason = "already publishing";
  } else if (id.mode == "request" && live_.count(id.resource) == 0) {
    code = SRT_REJX_NOTFOUND, *reason = "no publisher for this resource found";
  } else if (player_of_.size() + channels_.size() >= options_.max_connections) {
    code = SRT_REJX_OVERLOAD, *reason = "too many connections";
  }
  *mode = id.mode;
  if (code != 0) {
    Event event;
    event.type = "refused";
    event.mode = id.mode;
    event.resource = id.resource;
    event.stream_id = stream_id;
    event.peer = peer;
    event.reason = *reason;
    event.code = code;
    Post(std::move(event));
  }
  return code;
}

bool Core::GrantAllowsLocked(const std::string& token, const std::string& resource) const {
  // Every grant is compared in full, so the time taken says nothing about which one was near.
  bool allowed = false;
  for (const auto& grant : grants_) {
    if (!SameSecret(token, grant.first)) continue;
    for (const auto& own : grant.second) allowed = allowed || own == resource;
  }
  return allowed;
}

void Core::SetGrants(std::vector<std::pair<std::string, std::vector<std::string>>> grants) {
  std::lock_guard<std::mutex> lock(mutex_);
  grants_ = std::move(grants);
}

void Core::Run() {
  SRT_EPOLL_EVENT ready[kMaxEvents];
  while (!stopping_) {
    const int count = srt_epoll_uwait(epoll_, ready, kMaxEvents, kEpollTimeoutMs);
    if (count <= 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) break;
    for (int i = 0; i < count; i++) {
      const SRTSOCKET socket = ready[i].fd;
      const int events = ready[i].events;
      if (socket == listener_) {
        AcceptPending();
      } else if (channels_.count(socket) != 0) {
        if (events & SRT_EPOLL_IN) Relay(socket);
        if ((events & SRT_EPOLL_ERR) && channels_.count(socket) != 0) CloseLocked(socket, "disconnected");
      } else if (player_of_.count(socket) != 0) {
        if (events & SRT_EPOLL_IN) Drain(socket);
        if ((events & SRT_EPOLL_ERR) && player_of_.count(socket) != 0) CloseLocked(socket, "disconnected");
      }
    }
  }
}

void Core::AcceptPending() {
  for (;;) {
    sockaddr_storage address{};
    int size = sizeof address;
    const SRTSOCKET socket = srt_accept(listener_, reinterpret_cast<sockaddr*>(&address), &size);
    if (socket == SRT_INVALID_SOCK) return;
    char buffer[513] = "";
    int length = sizeof buffer - 1;
    if (srt_getsockflag(socket, SRTO_STREAMID, buffer, &length) == SRT_ERROR) length = 0;
    const std::string stream_id(buffer, length);
    const std::string peer = FormatAddress(reinterpret_cast<sockaddr*>(&address));
    StreamId id = stream_id.empty() ? StreamId{peer, "publish", ""} : ParseStreamId(stream_id);
    Event event;
    event.socket = socket;
    event.mode = id.mode;
    event.resource = id.resource;
    event.stream_id = stream_id;
    event.peer = peer;
    const auto live = live_.find(id.resource);
    // The handshake callback checked this, but two callers may have raced through it.
    if (id.mode == "publish" ? live != live_.end() : live == live_.end()) {
      srt_close(socket);
      event.type = "refused";
      event.socket = SRT_INVALID_SOCK;
      event.code = id.mode == "publish" ? SRT_REJX_CONFLICT : SRT_REJX_NOTFOUND;
      event.reason = id.mode == "publish" ? "already publishing" : "no publisher for this resource found";
      Post(std::move(event));
      continue;
    }
    const int flags = SRT_EPOLL_IN | SRT_EPOLL_ERR;
    srt_epoll_add_usock(epoll_, socket, &flags);
    if (id.mode == "publish") {
      live_[id.resource] = socket;
      channels_[socket] = Channel{id.resource, {}};
    } else {
      channels_[live->second].players.push_back(socket);
      player_of_[socket] = live->second;
      dropped_[socket] = 0;
    }
    event.type = "accepted";
    Post(std::move(event));
  }
}

void Core::Relay(SRTSOCKET publisher) {
  char message[kMaxPayload + 64];
  std::vector<SRTSOCKET> broken;
  for (int reads = 0; reads < kMaxReadsPerWake; reads++) {
    const int size = srt_recvmsg(publisher, message, sizeof message);
    if (size == SRT_ERROR) {
      if (srt_getlasterror(nullptr) != SRT_EASYNCRCV) CloseLocked(publisher, "disconnected");
      break;
    }
    Channel& channel = channels_[publisher];
    for (const SRTSOCKET player : channel.players) {
      if (srt_sendmsg(player, message, size, -1, 0) != SRT_ERROR) continue;
      const int error = srt_getlasterror(nullptr);
      // A full send buffer means the player cannot keep up: it skips this packet.
      if (error == SRT_EASYNCSND || error == SRT_ELARGEMSG) {
        dropped_[player]++;
      } else if (std::find(broken.begin(), broken.end(), player) == broken.end()) {
        broken.push_back(player);
      }
    }
    for (const SRTSOCKET player : broken) CloseLocked(player, "disconnected");
    broken.clear();
  }
}

void Core::Drain(SRTSOCKET player) {
  // Players have nothing to say in live mode; whatever they send anyway is read and dropped.
  char message[kMaxPayload + 64];
  for (int reads = 0; reads < kMaxReadsPerWake; reads++) {
    if (srt_recvmsg(player, message, sizeof message) != SRT_ERROR) continue;
    if (srt_getlasterror(nullptr) != SRT_EASYNCRCV) CloseLocked(player, "disconnected");
    return;
  }
}

void Core::CloseLocked(SRTSOCKET socket, const std::string& reason) {
  const auto channel = channels_.find(socket);
  if (channel != channels_.end()) {
    for (const SRTSOCKET player : channel->second.players) {
      player_of_.erase(player);
      dropped_.erase(player);
      CloseAndReport(player, "publisher left");
    }
    live_.erase(channel->second.resource);
    channels_.erase(channel);
  } else {
    const auto publisher = player_of_.find(socket);
    if (publisher == player_of_.end()) return;
    auto& players = channels_[publisher->second].players;
    players.erase(std::remove(players.begin(), players.end(), socket), players.end());
    player_of_.erase(publisher);
    dropped_.erase(socket);
  }
  CloseAndReport(socket, reason);
}

void Core::CloseAndReport(SRTSOCKET socket, const std::string& reason) {
  Event event;
  event.type = "closed";
  event.socket = socket;
  event.reason = reason;
  SRT_TRACEBSTATS stats{};
  if (srt_bstats(socket, &stats, 0) != SRT_ERROR) {
    event.bytes_read = static_cast<double>(stats.byteRecvTotal);
    event.bytes_written = static_cast<double>(stats.byteSentTotal);
  }
  srt_epoll_remove_usock(epoll_, socket);
  srt_close(socket);
  Post(std::move(event));
}

void Core::CloseSocket(SRTSOCKET socket, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  CloseLocked(socket, reason);
}

bool Core::Stats(SRTSOCKET socket, SRT_TRACEBSTATS* stats, uint64_t* dropped) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (channels_.count(socket) == 0 && player_of_.count(socket) == 0) return false;
  if (srt_bstats(socket, stats, 0) == SRT_ERROR) return false;
  const auto count = dropped_.find(socket);
  *dropped = count == dropped_.end() ? 0 : count->second;
  return true;
}

void Core::Post(Event event) {
  // Callers hold mutex_, which also orders the events.
  if (!events_open_) return;
  auto* data = new Event(std::move(event));
  const napi_status status = events_.NonBlockingCall(data, [](Napi::Env env, Napi::Function callback, Event* e) {
    Napi::Object object = Napi::Object::New(env);
    object.Set("type", e->type);
    object.Set("socket", Napi::Number::New(env, e->socket));
    object.Set("mode", e->mode);
    object.Set("resource", e->resource);
    object.Set("streamId", e->stream_id);
    object.Set("peer", e->peer);
    object.Set("reason", e->reason);
    object.Set("code", Napi::Number::New(env, e->code));
    object.Set("bytesRead", Napi::Number::New(env, e->bytes_read));
    object.Set("bytesWritten", Napi::Number::New(env, e->bytes_written));
    delete e;
    callback.Call({object});
  });
  if (status != napi_ok) delete data;
}

void Core::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    events_open_ = false;
  }
  srt_close(listener_);
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [player, publisher] : player_of_) srt_close(player);
  for (const auto& [publisher, channel] : channels_) srt_close(publisher);
  player_of_.clear();
  channels_.clear();
  live_.clear();
  dropped_.clear();
  srt_epoll_release(epoll_);
  events_.Release();
}

Napi::Function Listener::Init(Napi::Env env) {
  return DefineClass(env, "Listener",
                     {
                         InstanceMethod("port", &Listener::Port),
                         InstanceMethod("closeSocket", &Listener::CloseSocket),
                         InstanceMethod("stats", &Listener::Stats),
                         InstanceMethod("setGrants", &Listener::SetGrants),
                         InstanceMethod("close", &Listener::Close),
                     });
}

// new Listener({ host, port, passphrase, token, maxConnections }, onEvent)
Listener::Listener(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Listener>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    throw Napi::TypeError::New(env, "Listener(options, onEvent)");
  }
  Napi::Object given = info[0].As<Napi::Object>();
  ListenerOptions options;
  options.host = given.Get("host").ToString();
  options.port = given.Get("port").ToNumber().Int32Value();
  options.passphrase = given.Get("passphrase").ToString();
  options.token = given.Get("token").ToString();
  if (given.Has("maxConnections")) {
    options.max_connections = given.Get("maxConnections").ToNumber().Uint32Value();
  }
  auto events = Napi::ThreadSafeFunction::New(env, info[1].As<Napi::Function>(), "srt-events", 0, 1);
  core_ = new Core(std::move(options), events);
  try {
    core_->Start();
  } catch (const std::exception& error) {
    events.Release();
    closed_ = true;
    throw Napi::Error::New(env, error.what());
  }
}

Listener::~Listener() {
  if (!closed_) core_->Close();
}

Napi::Value Listener::Port(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), closed_ ? 0 : core_->Port());
}

Napi::Value Listener::CloseSocket(const Napi::CallbackInfo& info) {
  if (!closed_) {
    const std::string reason = info.Length() > 1 ? info[1].ToString().Utf8Value() : "closed";
    core_->CloseSocket(info[0].ToNumber().Int32Value(), reason);
  }
  return info.Env().Undefined();
}

Napi::Value Listener::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SRT_TRACEBSTATS stats{};
  uint64_t dropped = 0;
  if (closed_ || !core_->Stats(info[0].ToNumber().Int32Value(), &stats, &dropped)) return env.Undefined();
  Napi::Object object = StatsToObject(env, stats);
  // Packets a full send buffer refused are dropped by the sender too.
  object.Set("send_drop_pkt", Napi::Number::New(env, static_cast<double>(stats.pktSndDropTotal + dropped)));
  return object;
}

// setGrants([{ token, resources: [resource, …] }, …])
Napi::Value Listener::SetGrants(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "setGrants(grants)");
  Napi::Array given = info[0].As<Napi::Array>();
  std::vector<std::pair<std::string, std::vector<std::string>>> grants;
  for (uint32_t i = 0; i < given.Length(); i++) {
    Napi::Object grant = given.Get(i).As<Napi::Object>();
    Napi::Array resources = grant.Get("resources").As<Napi::Array>();
    std::vector<std::string> own;
    for (uint32_t j = 0; j < resources.Length(); j++) own.push_back(resources.Get(j).ToString());
    grants.emplace_back(grant.Get("token").ToString(), std::move(own));
  }
  if (!closed_) core_->SetGrants(std::move(grants));
  return env.Undefined();
}

Napi::Value Listener::Close(const Napi::CallbackInfo& info) {
  if (!closed_) {
    closed_ = true;
    core_->Close();
  }
  return info.Env().Undefined();
}

}  // namespace srt_ingest
