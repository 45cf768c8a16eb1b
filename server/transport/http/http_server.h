// HttpServer: HTTP/1.1 on keel's event loop, through libmicrohttpd (Debian's
// libmicrohttpd-dev). Why that library: it parses HTTP for us (no hand-written parser), it
// runs without threads of its own — keel's one loop drives it through an epoll descriptor
// and MHD_run (its "external polling" mode), which is the design card's single event loop —
// it suspends and resumes a connection while an answer is being computed, and it bounds
// what a client may send (header memory, connection timeouts, chunked bodies,
// `Expect: 100-continue`, pipelining) by itself. Boost.Beast would need keel to write the
// connection state machine and the timeouts.
//
// This layer knows HTTP only: methods, headers, bodies, status codes, streamed bodies. What a
// request means (MCP over Streamable HTTP) is the Handler's (mcp_http.h).
//
// Thread: loop thread only (libmicrohttpd runs on it, inside MHD_run).
// Invariants:
//  1. The handler sees a request once, complete: headers (names lower-cased) and a body of at
//     most `max_body_bytes`. A larger body (by Content-Length, or once the chunks exceed it)
//     is answered 413 here; past `max_connections` open connections a request is answered 503;
//     a request whose body two headers frame (two Content-Lengths, or one with
//     Transfer-Encoding: RFC 9112 §6.3, the request-smuggling shapes, which libmicrohttpd
//     accepts) is answered 400 and the connection closed. None of them reaches the handler.
//  2. Each HttpCall is answered at most once: Respond (a whole body) or Stream (a body pulled
//     from a StreamSource until it ends). Until then the connection is suspended: keel reads
//     nothing more from it and libmicrohttpd's timeout does not run.
//  3. A client that goes away before its answer was completely sent is reported once,
//     through Handler::OnCallEnded(call, false), as soon as it is seen: while the connection
//     is suspended keel itself watches its socket for the peer's close (POLLRDHUP), because
//     libmicrohttpd does not; while it is being written, libmicrohttpd reports the failed
//     write or the timeout of a client that stopped reading. After OnCallEnded the call is
//     the server's alone (the handler must forget it) and it is closed without more output.
//     A peer that ends its side before its request is complete is closed at once too (keel
//     watches every connection: libmicrohttpd's edge-triggered epoll misses a FIN that came
//     with the last bytes it read, and would keep the connection until idle_timeout).
//  4. A completely sent answer is reported through OnCallEnded(call, true).
//  5. StopAccepting closes the listening socket; open connections go on until their answers
//     are sent. Destroying the server closes every connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace keel {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// `s` with ASCII letters lower-cased (header names, hosts).
std::string AsciiLower(std::string_view s);

struct HttpRequest {
  std::string method;   // "POST", "GET", ...
  std::string path;     // without the query string
  HttpHeaders headers;  // names lower-cased, in arrival order
  std::string body;
  std::string client;  // the peer's address, for logs

  // The first header named `lower_name`; nullopt when absent.
  std::optional<std::string_view> Header(std::string_view lower_name) const;
  // How many headers are named `lower_name`.
  size_t CountHeader(std::string_view lower_name) const;
};

// Where a streamed body comes from: pulled when the connection can take more.
class StreamSource {
 public:
  virtual ~StreamSource() = default;
  // Copies up to `max` bytes of body into `buf`; 0 when nothing is ready now.
  virtual size_t Read(char* buf, size_t max) = 0;
  // Nothing more will come once Read returns 0.
  virtual bool ended() const = 0;
};

class HttpServer;

// The answer side of one request (invariant 2). Owned by the server.
class HttpCall {
 public:
  uint64_t id() const { return id_; }
  // A whole response.
  void Respond(int status, std::string content_type, std::string body, HttpHeaders headers = {});
  // A streamed response with `status` and `headers` sent now; the body is pulled from
  // `source` (which must live until OnCallEnded). Call Wake when it has more to give.
  void Stream(int status, std::string content_type, HttpHeaders headers, StreamSource* source);
  void Wake();
  // Closes the connection without (more of) an answer. OnCallEnded(false) follows.
  void Abort();
  bool answered() const { return answered_; }

 private:
  friend class HttpServer;
  enum class Phase { kReceiving, kWaiting, kAnswering, kDone };
  HttpCall(HttpServer& server, uint64_t id, MHD_Connection* connection)
      : server_(server), id_(id), connection_(connection) {}

  HttpServer& server_;
  const uint64_t id_;
  MHD_Connection* connection_;
  HttpRequest request_;
  Phase phase_ = Phase::kReceiving;
  bool too_large_ = false;
  bool delivered_ = false;
  bool answered_ = false;
  bool suspended_ = false;
  bool aborting_ = false;
  bool reported_ = false;  // OnCallEnded was called
  int watched_fd_ = -1;    // the socket keel watches while suspended (invariant 3)
  // A whole response waiting to be queued.
  struct Whole {
    int status = 200;
    std::string content_type;
    std::string body;
    HttpHeaders headers;
  };
  std::optional<Whole> whole_;
  // A streamed response waiting to be queued, or being sent.
  std::optional<Whole> stream_head_;
  StreamSource* source_ = nullptr;
};

class HttpServer {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // A complete request (invariant 1): answer it now or later through `call`.
    virtual void OnRequest(HttpCall& call, const HttpRequest& request) = 0;
    // Invariants 3 and 4. `call` is destroyed soon after; do not use it again.
    virtual void OnCallEnded(HttpCall& call, bool completed) = 0;
  };

  struct Options {
    std::string host = "127.0.0.1";  // an address, or a name resolved once at start
    uint16_t port = 0;               // 0: any free port (see port())
    size_t max_body_bytes = 16 << 20;
    size_t max_connections = 256;
    // A connection that sends or takes nothing for this long is closed (slow headers,
    // slow bodies, a reader that stopped reading). Not while suspended (an answer is being
    // computed: the call's own clocks apply then).
    Duration idle_timeout = Millis(30000);
    size_t max_header_bytes = 32 << 10;  // per connection: request line and headers
  };

  HttpServer(EventLoop& loop, Options options, Handler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens. False with `error` set when it cannot.
  bool Start(std::string* error);
  // The bound port (after Start).
  uint16_t port() const { return port_; }
  // Invariant 5.
  void StopAccepting();
  // Open connections, and calls not yet ended.
  size_t connections() const { return connections_; }
  size_t calls() const { return calls_.size(); }
  // Runs libmicrohttpd until every call has ended or `deadline` passes (the exit path).
  void DrainUntil(TimePoint deadline);

 private:
  friend class HttpCall;
  struct Glue;  // libmicrohttpd's C callbacks (http_server.cc)

  HttpCall* NewCall(MHD_Connection* connection);
  // One pass of the access handler for `call` (see http_server.cc).
  int Access(HttpCall& call, const char* upload, size_t* upload_size);
  long Pull(HttpCall& call, char* buf, size_t max);
  void Completed(HttpCall* call, bool ok);
  void Suspend(HttpCall& call);
  void Resume(HttpCall& call);
  void PeerClosed(HttpCall& call);
  // keel watches every connection's socket for its peer's close (invariant 3).
  void WatchPeer(MHD_Connection* connection, int fd);
  void PeerEvent(MHD_Connection* connection, int fd, short revents);
  void Report(HttpCall& call, bool completed);
  // The 413 answer of a body over max_body_bytes (invariant 1).
  void RefuseTooLarge(HttpCall& call) const;
  // At most this much is reserved for a body from its Content-Length before it arrives.
  static constexpr size_t kMaxBodyReserve = 64 << 10;
  // Queues what the call has to say; false when nothing is ready.
  bool QueueAnswer(HttpCall& call);
  // MHD_run soon (from the mailbox, so the session's before-wait hook sees what it causes).
  void RunSoon();
  void Run();
  void ArmTimer();

  EventLoop& loop_;
  const Options options_;
  Handler& handler_;
  MHD_Daemon* daemon_ = nullptr;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  uint16_t port_ = 0;
  uint64_t next_call_ = 1;
  size_t connections_ = 0;
  bool run_posted_ = false;
  bool running_ = false;
  std::optional<EventLoop::TimerId> timer_;
  std::unordered_map<uint64_t, std::unique_ptr<HttpCall>> calls_;
  // Whether this object is alive, for posted functions.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace keel
