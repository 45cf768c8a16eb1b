// HttpUpstream: the wrapped MCP server as a Streamable HTTP endpoint (`keel wrap
// --upstream-url URL`): 2025-11-25 with its session, or 2026-07-28 stateless — whichever the
// messages keel sends speak (UpstreamLink's handshake decides; http_upstream_session.h).
//
// Why libcurl (Debian libcurl4-openssl-dev): keel needs an HTTP *client* with TLS for https
// upstreams; libmicrohttpd, which keel serves HTTP with, is a server only; libcurl is the
// well-kept client Debian ships, and its multi interface runs every transfer on one thread.
//
// What it does:
//  1. Every message keel sends is one POST to URL (headers: http_upstream_session.h). Its
//     response is read by UpstreamTransfer (http_upstream_transfer.h): one JSON message, or
//     an SSE stream of them; each goes to on_message with `related` = the POST's request id
//     (null for a notification's or a response's POST). 202 Accepted has no body.
//  2. A request whose POST fails gets an answer all the same, so it never hangs: the
//     upstream's own JSON-RPC error when its error page is one, else a JSON-RPC error
//     {"code": -32000, "message": "upstream HTTP: <what happened>", "data": {"http_status":
//     N} or {"transport": "<libcurl's error>"}, and "sent": false when no connection could be
//     made (the upstream got nothing), else true} — also when the response ended without
//     the answer, or a body or event passed max_line_bytes (the bound keel puts on a
//     client's lines). One failed request does not end the connection: HTTP keeps no state
//     keel could lose with it, and the next request may well succeed. A failed notification
//     or response POST is logged, nothing more.
//  3. The connection ends (on_closed; UpstreamLink then reconnects as it restarts a stdio
//     server, with a new handshake) when: the upstream could not be reached at all (no HTTP
//     response) for kMaxUnreachable requests in a row; a legacy upstream answers 404 to keel's
//     Mcp-Session-Id (it ended the session, MCP's signal to initialize again); or Shutdown.
//  4. Abandon(id) stops that request's transfer: closing its stream is the 2026-07-28 cancel
//     and makes sure nothing more of it is read; a request still queued is never sent. A
//     modern notifications/cancelled is not POSTed (2026-07-28 defines no client
//     notification over HTTP: the closed stream says it); a legacy one is, as MCP asks.
//  5. Legacy only: once notifications/initialized is accepted, a GET stream is opened for
//     what the upstream says outside requests (list_changed, ...; related = null). 405 (or
//     any refusal) means the upstream has none: keel does without. A stream that ends is
//     opened again after REC-2's backoff: 250 ms doubling to 8 s, jittered
//     (stream_schedule.h, reconnect_backoff.h).
//  6. Bounds: at most kMaxInFlight POSTs at once (each may hold a connection and a stream);
//     more wait in a queue of at most max_queued_bytes, beyond which Send fails. An
//     answered stream the upstream leaves open is closed after kAnswerLinger (transfer_pool.h).
//  7. Shutdown(grace): every transfer is stopped; a legacy session is ended with DELETE
//     (within the grace; its failure ignored); on_closed runs once.
// keel follows no redirects and resumes no stream (no Last-Event-ID): a stream cut off
// before its answer is a failed request (rule 2).
//
// Thread-safety: Send and Abandon from any thread (also from inside the events); Shutdown
// from one thread (the owner), once. Every event runs on the transport's own thread.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/upstream/http_upstream_session.h"
#include "server/upstream/http_upstream_transfer.h"
#include "server/upstream/stream_schedule.h"
#include "server/upstream/transfer_pool.h"
#include "server/upstream/upstream_transport.h"

namespace keel {

inline constexpr size_t kMaxInFlight = 256;
inline constexpr int kMaxUnreachable = 3;

struct UpstreamEndpoint {
  std::string url;                   // http:// or https://
  std::vector<std::string> headers;  // "Name: value", sent with every request
  size_t max_line_bytes = 16 << 20;
  size_t max_queued_bytes = 8 << 20;
  Duration connect_timeout = Millis(10000);
  uint64_t reconnect_id = 0;  // the GET stream's reconnect jitter (reconnect_backoff.h)
};

class HttpUpstream final : public UpstreamTransport {
 public:
  // Null, with *error, when the URL is not http(s) or libcurl cannot start.
  static std::unique_ptr<HttpUpstream> Start(const UpstreamEndpoint& endpoint,
                                             UpstreamEvents events, std::string* error);
  ~HttpUpstream() override;

  bool Send(const Json& message, std::string* why) override;
  void Abandon(const Json& id) override;
  void Shutdown(Duration grace) override;
  // The URL without its user:password, for logs.
  const std::string& shown_url() const { return shown_url_; }

 private:
  HttpUpstream(const UpstreamEndpoint& endpoint, UpstreamEvents events);
  struct Queued {
    Json message;
    std::string body;
  };
  struct Intake;
  void Run();
  bool TakeWork(Intake& intake);
  std::unique_ptr<UpstreamTransfer> MakeTransfer(UpstreamTransfer::Spec spec);
  void StartPost(Queued queued);
  void StartStream();
  void OnMessage(const UpstreamTransfer& transfer, Json message);
  void Settle(const UpstreamTransfer& transfer, const UpstreamTransfer::Outcome& outcome,
              TimePoint now);
  void SettleStream(const UpstreamTransfer::Outcome& outcome, TimePoint now);
  void AnswerFailed(const Json& id, const std::string& method,
                    const UpstreamTransfer::Outcome& outcome);
  void EndSession(Duration grace);
  void Stop();

  const UpstreamEndpoint endpoint_;
  const std::string shown_url_;
  UpstreamEvents events_;
  TransferPool pool_;  // Wake from any thread; the rest on the transport's thread

  std::mutex mu_;
  std::deque<Queued> queue_;     // guarded by mu_: not yet POSTed (rule 6)
  size_t queued_bytes_ = 0;      // guarded by mu_
  std::vector<Json> abandoned_;  // guarded by mu_: ids for the thread to stop
  bool closed_ = false;          // guarded by mu_: no more sends
  bool stopping_ = false;        // guarded by mu_: Shutdown asked
  Duration grace_{};             // guarded by mu_

  // The transport's thread only:
  HttpUpstreamSession session_;
  UpstreamTransfer::JunkCount junk_;
  bool stream_open_ = false;  // rule 5: the GET stream is in pool_
  StreamSchedule stream_schedule_;
  int unreachable_ = 0;  // rule 3: requests in a row without any HTTP response
  std::string ended_;    // rule 3: why the upstream ended the connection; empty: it did not
  std::thread thread_;
};

}  // namespace keel
