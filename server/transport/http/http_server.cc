#include "server/transport/http/http_server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include "server/transport/http/mhd_api.h"

namespace keel {

namespace {

std::string AddressText(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (addr == nullptr) return "?";
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, text, sizeof text);
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, text, sizeof text);
  }
  return text;
}

// A listening socket on host:port, or -1 with `error` set.
int Listen(const std::string& host, uint16_t port, bool* ipv6, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    *error = "cannot resolve " + host + ": " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  std::string last = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (ai->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      *ipv6 = ai->ai_family == AF_INET6;
      break;
    }
    last = std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) *error = "cannot listen on " + host + ":" + service + ": " + last;
  return fd;
}

uint16_t BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

MHD_Response* BuildResponse(MHD_Response* response, const std::string& content_type,
                            const HttpHeaders& headers) {
  if (!content_type.empty()) {
    Mhd().add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type.c_str());
  }
  for (const auto& [name, value] : headers) {
    Mhd().add_response_header(response, name.c_str(), value.c_str());
  }
  return response;
}

}  // namespace

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::string_view> HttpRequest::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return std::string_view(value);
  }
  return std::nullopt;
}

size_t HttpRequest::CountHeader(std::string_view lower_name) const {
  return static_cast<size_t>(std::count_if(headers.begin(), headers.end(),
                                           [&](const auto& h) { return h.first == lower_name; }));
}

void HttpCall::Respond(int status, std::string content_type, std::string body,
                       HttpHeaders headers) {
  if (answered_ || aborting_) return;
  answered_ = true;
  whole_ = Whole{status, std::move(content_type), std::move(body), std::move(headers)};
  if (suspended_) server_.Resume(*this);
}

void HttpCall::Stream(int status, std::string content_type, HttpHeaders headers,
                      StreamSource* source) {
  if (answered_ || aborting_) return;
  answered_ = true;
  stream_head_ = Whole{status, std::move(content_type), {}, std::move(headers)};
  source_ = source;
  if (suspended_) server_.Resume(*this);
}

void HttpCall::Wake() {
  if (suspended_ && phase_ == Phase::kAnswering) server_.Resume(*this);
}

void HttpCall::Abort() {
  if (aborting_) return;
  aborting_ = true;
  if (suspended_) server_.Resume(*this);
}

// libmicrohttpd's C callbacks, forwarding to the server.
struct HttpServer::Glue {
  static MHD_Result Access(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char* /*version*/, const char* upload,
                           size_t* upload_size, void** req_cls) {
    auto* server = static_cast<HttpServer*>(cls);
    auto* call = static_cast<HttpCall*>(*req_cls);
    if (call == nullptr) {
      call = server->NewCall(connection);
      *req_cls = call;
      call->request_.method = method;
      call->request_.path = url;
      return server->Access(*call, nullptr, nullptr) != 0 ? MHD_YES : MHD_NO;
    }
    return server->Access(*call, upload, upload_size) != 0 ? MHD_YES : MHD_NO;
  }

  static ssize_t Pull(void* cls, uint64_t /*pos*/, char* buf, size_t max) {
    auto* call = static_cast<HttpCall*>(cls);
    return call->server_.Pull(*call, buf, max);
  }

  static void Completed(void* cls, MHD_Connection* /*connection*/, void** req_cls,
                        MHD_RequestTerminationCode code) {
    auto* call = static_cast<HttpCall*>(*req_cls);
    *req_cls = nullptr;
    if (call != nullptr) {
      static_cast<HttpServer*>(cls)->Completed(call, code == MHD_REQUEST_TERMINATED_COMPLETED_OK);
    }
  }

  static void Connection(void* cls, MHD_Connection* connection, void** socket_context,
                         MHD_ConnectionNotificationCode code) {
    auto* server = static_cast<HttpServer*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      ++server->connections_;
      const MHD_ConnectionInfo* info =
          Mhd().get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      if (info != nullptr) {
        // The socket, remembered for CLOSED (fd + 1: null means none).
        *socket_context = reinterpret_cast<void*>(static_cast<intptr_t>(info->connect_fd) + 1);
        server->WatchPeer(connection, info->connect_fd);
      }
    }
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
      if (server->connections_ > 0) --server->connections_;
      if (*socket_context != nullptr) {
        server->loop_.Unwatch(static_cast<int>(reinterpret_cast<intptr_t>(*socket_context) - 1));
        *socket_context = nullptr;
      }
    }
  }

  static MHD_Result Header(void* cls, MHD_ValueKind /*kind*/, const char* key, size_t key_size,
                           const char* value, size_t value_size) {
    auto* request = static_cast<HttpRequest*>(cls);
    request->headers.emplace_back(
        AsciiLower(std::string_view(key, key_size)),
        std::string(value == nullptr ? "" : value, value == nullptr ? 0 : value_size));
    return MHD_YES;
  }

  static void Log(void* /*cls*/, const char* format, va_list args) {
    char text[512];
    vsnprintf(text, sizeof text, format, args);
    std::string line(text);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    spdlog::debug("http: {}", line);
  }
};

HttpServer::HttpServer(EventLoop& loop, Options options, Handler& handler)
    : loop_(loop), options_(std::move(options)), handler_(handler) {}

HttpServer::~HttpServer() {
  *alive_ = false;
  if (timer_) loop_.CancelTimer(*timer_);
  if (daemon_ != nullptr) {
    // libmicrohttpd must not be stopped with suspended connections.
    for (auto& [id, call] : calls_) {
      call->reported_ = true;  // the handler is not told during destruction
      call->aborting_ = true;
      if (call->suspended_) Resume(*call);
    }
    loop_.Unwatch(epoll_fd_);
    Mhd().stop_daemon(daemon_);
  }
  if (listen_fd_ >= 0) close(listen_fd_);
}

bool HttpServer::Start(std::string* error) {
  // libmicrohttpd is loaded now, the first time it is needed (mhd_api.h says why).
  if (const std::string& why = MhdLoadError(); !why.empty()) {
    *error = why;
    return false;
  }
  bool ipv6 = false;
  listen_fd_ = Listen(options_.host, options_.port, &ipv6, error);
  if (listen_fd_ < 0) return false;
  port_ = BoundPort(listen_fd_);
  const auto timeout_s = static_cast<unsigned>(std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options_.idle_timeout).count()));
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  if (ipv6) flags |= MHD_USE_IPv6;
  daemon_ = Mhd().start_daemon(
      flags, 0, nullptr, nullptr, &Glue::Access, this, MHD_OPTION_LISTEN_SOCKET, listen_fd_,
      MHD_OPTION_NOTIFY_COMPLETED, &Glue::Completed, this, MHD_OPTION_NOTIFY_CONNECTION,
      &Glue::Connection, this, MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, options_.max_header_bytes,
      // A hard bound above --http-max-connections: the ones past it get a 503 (Access).
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(options_.max_connections + 64),
      MHD_OPTION_EXTERNAL_LOGGER, &Glue::Log, this, MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
      MHD_OPTION_END);
  if (daemon_ == nullptr) {
    *error = "cannot start the HTTP server (libmicrohttpd)";
    return false;
  }
  listen_fd_ = -1;  // the daemon's now (MHD_stop_daemon closes it)
  const MHD_DaemonInfo* info = Mhd().get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD);
  epoll_fd_ = info == nullptr ? -1 : info->epoll_fd;
  if (epoll_fd_ < 0) {
    *error = "libmicrohttpd gave no epoll descriptor";
    return false;
  }
  loop_.Watch(epoll_fd_, POLLIN, [this](short) { Run(); });
  ArmTimer();
  return true;
}

void HttpServer::StopAccepting() {
  if (daemon_ == nullptr) return;
  const int fd = Mhd().quiesce_daemon(daemon_);
  if (fd >= 0) close(fd);
}

void HttpServer::DrainUntil(TimePoint deadline) {
  while (daemon_ != nullptr && !calls_.empty() && loop_.clock().Now() < deadline) {
    Mhd().run_wait(daemon_, 10);
  }
}

HttpCall* HttpServer::NewCall(MHD_Connection* connection) {
  const uint64_t id = next_call_++;
  auto call = std::unique_ptr<HttpCall>(new HttpCall(*this, id, connection));
  HttpCall* raw = call.get();
  calls_.emplace(id, std::move(call));
  const MHD_ConnectionInfo* info =
      Mhd().get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  raw->request_.client = AddressText(info == nullptr ? nullptr : info->client_addr);
  Mhd().get_connection_values_n(connection, MHD_HEADER_KIND, &Glue::Header, &raw->request_);
  return raw;
}

// One pass of libmicrohttpd's access handler: `upload` null on the first pass (headers
// complete), then once per piece of body, then with *upload_size == 0 once the body is
// complete — and again after each resume until an answer is queued.
int HttpServer::Access(HttpCall& call, const char* upload, size_t* upload_size) {
  if (upload_size == nullptr) {  // first pass: refuse early what must not be read
    if (connections_ > options_.max_connections) {
      call.answered_ = true;
      call.whole_ = HttpCall::Whole{503,
                                    "text/plain",
                                    "too many connections\n",
                                    {{"Connection", "close"}, {"Retry-After", "1"}}};
      call.phase_ = HttpCall::Phase::kWaiting;
      return QueueAnswer(call) ? 1 : 0;
    }
    const size_t lengths = call.request_.CountHeader("content-length");
    if (lengths > 1 || (lengths == 1 && call.request_.CountHeader("transfer-encoding") > 0)) {
      call.answered_ = true;
      call.whole_ =
          HttpCall::Whole{400,
                          "text/plain",
                          lengths > 1 ? "more than one Content-Length header\n"
                                      : "both Content-Length and Transfer-Encoding headers\n",
                          {{"Connection", "close"}}};
      call.phase_ = HttpCall::Phase::kWaiting;
      return QueueAnswer(call) ? 1 : 0;
    }
    if (auto length = call.request_.Header("content-length")) {
      const std::string text(*length);
      char* end = nullptr;
      errno = 0;
      const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
      if (errno != 0 || n > options_.max_body_bytes) {
        RefuseTooLarge(call);
        call.phase_ = HttpCall::Phase::kWaiting;
        return QueueAnswer(call) ? 1 : 0;
      }
      // What the client announces is not trusted with memory before it arrives.
      call.request_.body.reserve(std::min<size_t>(static_cast<size_t>(n), kMaxBodyReserve));
    }
    return 1;
  }
  if (*upload_size != 0) {
    if (!call.too_large_) {
      if (call.request_.body.size() + *upload_size > options_.max_body_bytes) {
        call.too_large_ = true;
        std::string().swap(call.request_.body);
      } else {
        call.request_.body.append(upload, *upload_size);
      }
    }
    *upload_size = 0;
    return 1;
  }
  if (call.phase_ == HttpCall::Phase::kReceiving) {
    call.phase_ = HttpCall::Phase::kWaiting;
    if (call.too_large_) {
      RefuseTooLarge(call);
    } else {
      call.delivered_ = true;
      handler_.OnRequest(call, call.request_);
    }
  }
  if (call.aborting_) return 0;
  if (call.phase_ == HttpCall::Phase::kAnswering) return 1;
  if (QueueAnswer(call)) return 1;
  Suspend(call);
  return 1;
}

void HttpServer::RefuseTooLarge(HttpCall& call) const {
  call.answered_ = true;
  call.whole_ = HttpCall::Whole{
      413,
      "text/plain",
      "request body larger than " + std::to_string(options_.max_body_bytes) + " bytes\n",
      {{"Connection", "close"}}};
}

bool HttpServer::QueueAnswer(HttpCall& call) {
  MHD_Response* response = nullptr;
  int status = 200;
  if (call.whole_) {
    HttpCall::Whole& whole = *call.whole_;
    status = whole.status;
    response = Mhd().create_response_from_buffer(whole.body.size(), whole.body.data(),
                                                 MHD_RESPMEM_MUST_COPY);
    if (response != nullptr) BuildResponse(response, whole.content_type, whole.headers);
    call.whole_.reset();
  } else if (call.stream_head_) {
    status = call.stream_head_->status;
    response = Mhd().create_response_from_callback(MHD_SIZE_UNKNOWN, 16 << 10, &Glue::Pull, &call,
                                                   nullptr);
    if (response != nullptr) {
      BuildResponse(response, call.stream_head_->content_type, call.stream_head_->headers);
    }
    call.stream_head_.reset();
  } else {
    return false;
  }
  if (response == nullptr) {
    call.aborting_ = true;
    return false;
  }
  const MHD_Result queued =
      Mhd().queue_response(call.connection_, static_cast<unsigned>(status), response);
  Mhd().destroy_response(response);
  if (queued != MHD_YES) {
    call.aborting_ = true;
    return false;
  }
  call.phase_ = HttpCall::Phase::kAnswering;
  return true;
}

long HttpServer::Pull(HttpCall& call, char* buf, size_t max) {
  if (call.aborting_ || call.source_ == nullptr) return MHD_CONTENT_READER_END_WITH_ERROR;
  const size_t n = call.source_->Read(buf, max);
  if (n > 0) return static_cast<long>(n);
  if (call.source_->ended()) return MHD_CONTENT_READER_END_OF_STREAM;
  Suspend(call);
  return 0;
}

void HttpServer::Suspend(HttpCall& call) {
  if (call.suspended_) return;
  Mhd().suspend_connection(call.connection_);
  call.suspended_ = true;
  const MHD_ConnectionInfo* info =
      Mhd().get_connection_info(call.connection_, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (info == nullptr) return;
  call.watched_fd_ = info->connect_fd;
  WatchPeer(call.connection_, call.watched_fd_);  // (re)armed: PeerEvent reports the close
}

void HttpServer::Resume(HttpCall& call) {
  if (!call.suspended_) return;
  call.watched_fd_ = -1;  // the connection's watch stays (PeerEvent)
  call.suspended_ = false;
  Mhd().resume_connection(call.connection_);
  RunSoon();
}

void HttpServer::WatchPeer(MHD_Connection* connection, int fd) {
  loop_.Watch(fd, POLLRDHUP,
              [this, connection, fd](short revents) { PeerEvent(connection, fd, revents); });
}

// The peer of `connection` closed (or half-closed) its side, or the socket failed.
//  - A suspended call: libmicrohttpd does not watch it, keel reports it (invariant 3).
//  - A request not complete yet (no call, or its body still coming): it never will be.
//    libmicrohttpd's edge-triggered epoll misses a FIN that came with the last bytes it read
//    (a short read clears its read-ready state and no new edge follows), which would hold
//    the connection until the idle timeout: shut the socket down so that it sees the end now.
//  - A call being answered: libmicrohttpd sees the close when it writes; stop polling it.
void HttpServer::PeerEvent(MHD_Connection* connection, int fd, short revents) {
  if ((revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0) return;
  HttpCall* call = nullptr;
  for (auto& [id, c] : calls_) {
    if (c->connection_ == connection && !c->reported_) call = c.get();
  }
  char byte;
  const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // still there (stale event)
  if (call != nullptr && call->suspended_) {
    if (call->watched_fd_ == fd) PeerClosed(*call);
    return;
  }
  if (call != nullptr && call->phase_ != HttpCall::Phase::kReceiving) {
    loop_.SetEvents(fd, 0);
    return;
  }
  if (n > 0) return;  // bytes libmicrohttpd has not read yet: its epoll reports them
  shutdown(fd, SHUT_RDWR);
  loop_.SetEvents(fd, 0);
  RunSoon();
}

void HttpServer::PeerClosed(HttpCall& call) {
  Report(call, false);
  call.aborting_ = true;
  Resume(call);
}

void HttpServer::Report(HttpCall& call, bool completed) {
  if (call.reported_) return;
  call.reported_ = true;
  // Only a delivered request is the handler's business.
  if (call.delivered_) handler_.OnCallEnded(call, completed);
}

void HttpServer::Completed(HttpCall* call, bool ok) {
  call->watched_fd_ = -1;
  // The connection may carry another request: watch its peer again (PeerEvent).
  if (const MHD_ConnectionInfo* info =
          Mhd().get_connection_info(call->connection_, MHD_CONNECTION_INFO_CONNECTION_FD)) {
    loop_.SetEvents(info->connect_fd, POLLRDHUP);
  }
  Report(*call, ok && call->phase_ == HttpCall::Phase::kAnswering && !call->aborting_);
  calls_.erase(call->id_);
}

void HttpServer::RunSoon() {
  if (run_posted_) return;
  run_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_.Post([this, alive] {
    if (alive.expired()) return;
    run_posted_ = false;
    Run();
  });
}

void HttpServer::Run() {
  if (daemon_ == nullptr || running_) return;
  running_ = true;
  Mhd().run(daemon_);
  running_ = false;
  ArmTimer();
}

void HttpServer::ArmTimer() {
  if (timer_) loop_.CancelTimer(*timer_);
  timer_.reset();
  MHD_UNSIGNED_LONG_LONG ms = 0;
  if (daemon_ == nullptr || Mhd().get_timeout(daemon_, &ms) != MHD_YES) return;
  timer_ = loop_.AddTimer(loop_.clock().Now() + Millis(static_cast<int64_t>(ms)), [this] {
    timer_.reset();
    Run();
  });
}

}  // namespace keel
