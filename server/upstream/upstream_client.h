// UpstreamClient: keel as an MCP client of the server it wraps, over one UpstreamTransport
// connection (one instance of the upstream): request ids, answers, progress, the upstream's
// own requests and notifications. The handshake and what is asked are UpstreamLink's
// (upstream_link.h) and the tools' (upstream_call.h).
//
// Routing (on the transport's thread):
//  1. A response goes to the request with its id, which is then forgotten; a response for
//     an id keel no longer waits for (a call cancelled or timed out, an answer sent twice) is
//     dropped: a late upstream answer never reaches a client.
//  2. notifications/progress goes to the request whose progressToken it names (keel gives
//     each request that wants progress a token of its own, "keel-<id>").
//  3. The upstream's requests: ping is answered at once; elicitation/create,
//     sampling/createMessage and roots/list go to the request they belong to — the one whose
//     stream carried them (HTTP), else the only request in flight that accepts questions —
//     and roots/list outside any call is answered with no roots. Anything else, or a
//     question keel cannot place, is answered with an error: keel never guesses which
//     client a question is for.
//  4. notifications/message goes to the request it belongs to as in 3 (that call's log),
//     else to on_notification; every other notification goes to on_notification.
//  5. When the connection closes, every request in flight is lost (UpstreamRequest::kLost,
//     with the reason) and on_closed runs.
// 2026-07-28 upstreams: every request's params._meta carries keel's envelope (set_envelope).
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/logging_level.h"
#include "server/runtime/cancellation.h"
#include "server/runtime/clock.h"
#include "server/runtime/suspend.h"
#include "server/upstream/upstream_transport.h"

namespace keel {

using Json = nlohmann::json;

// One request keel sent the upstream, and what came back for it.
class UpstreamRequest : public std::enable_shared_from_this<UpstreamRequest> {
 public:
  enum class Event { kAnswered, kAsked, kLost, kCancelled, kDeadline };
  // Waits until something happened: the answer, a question from the upstream for this
  // request (taken with TakeAsk), the connection's end, `token` cancelled, or `deadline`.
  // In a pool job that can (suspend.h) the job suspends, giving its worker thread back, and
  // is resumed once by whichever comes first: the transport's thread with the answer, the
  // question or the end; the canceller; or the shared DeadlineTimer. Elsewhere it blocks.
  Event Wait(const CancellationToken& token, TimePoint deadline);

  const Json& id() const { return id_; }
  // kAnswered: the response's "result", or its "error" (is_error()).
  const Json& answer() const { return answer_; }
  bool is_error() const { return is_error_; }
  // kAsked: the upstream's request {id, method, params}; each is taken once.
  std::optional<Json> TakeAsk();
  // kLost: why; sent(): whether the request reached the connection at all (false: it was
  // never written, so the upstream did nothing).
  const std::string& lost_reason() const { return lost_reason_; }
  bool sent() const { return sent_; }
  // The progressToken keel gave the upstream for it; empty: none.
  const std::string& progress_token() const { return token_; }

 private:
  friend class UpstreamClient;
  using ProgressFn = std::function<void(double, std::optional<double>, std::string)>;
  using LogFn = std::function<void(LoggingLevel, std::string)>;

  // The event now, if any. Requires mu_.
  std::optional<Event> ReadyLocked(const CancellationToken& token, TimePoint deadline) const;
  Event BlockingWait(const CancellationToken& token, TimePoint deadline);
  Event SuspendingWait(const CancellationToken& token, TimePoint deadline);
  // Something may have happened: wakes a blocked waiter, resumes a suspended one. Without mu_,
  // with the ResumeFn taken under it (TakeWaiterLocked) in the same critical section that
  // changed the state.
  void Wake(ResumeFn waiter);
  ResumeFn TakeWaiterLocked();

  Json id_;
  bool accepts_asks_ = false;
  ProgressFn progress_;
  LogFn log_;
  std::string token_;  // progressToken; empty: none

  std::mutex mu_;
  std::condition_variable cv_;
  bool answered_ = false;  // guarded by mu_ (the fields below too)
  bool lost_ = false;
  bool sent_ = true;
  ResumeFn waiter_;  // a suspended Wait()'s, until taken (once) by whoever resumes it
  Json answer_;
  bool is_error_ = false;
  std::string lost_reason_;
  std::deque<Json> asks_;
};

class UpstreamClient {
 public:
  struct Handlers {
    // Notifications that belong to no request (list_changed, resources/updated, a log
    // message that cannot be placed). Transport thread.
    std::function<void(const std::string& method, const Json& params)> on_notification;
    std::function<void(const std::string& why)> on_closed;
  };
  struct StartOptions {
    bool accepts_asks = false;             // rule 3
    UpstreamRequest::ProgressFn progress;  // null: no progressToken is sent
    UpstreamRequest::LogFn log;
    // Non-empty (with `progress`): the upstream's progress under this token, which an earlier
    // request of keel's gave it, is this request's; nothing is added to the params. A
    // 2025-11-25 task goes on using its tools/call's token after the CreateTaskResult, while
    // keel waits on tasks/result.
    std::string progress_token;
  };

  explicit UpstreamClient(Handlers handlers);
  ~UpstreamClient();
  // The events to give the transport; then Attach it (before anything is sent).
  UpstreamEvents Events();
  void Attach(std::unique_ptr<UpstreamTransport> transport);
  // 2026-07-28: merged into every request's params._meta.
  void set_envelope(Json meta);

  // Sends a request. A request that cannot be written is kLost at once, with sent() false.
  std::shared_ptr<UpstreamRequest> Start(const std::string& method, Json params,
                                         StartOptions options);
  std::shared_ptr<UpstreamRequest> Start(const std::string& method, Json params) {
    return Start(method, std::move(params), StartOptions());
  }
  // Start, then wait for the answer until `deadline` or `stop` (handshakes, lists). nullopt
  // with *why when none came; a JSON-RPC error comes back as {"error": {...}}.
  std::optional<Json> Request(const std::string& method, Json params, TimePoint deadline,
                              const CancellationToken& stop, std::string* why);
  // Forgets `request` (a later answer is dropped) and tells the upstream with
  // notifications/cancelled, unless it was answered already.
  void Cancel(const std::shared_ptr<UpstreamRequest>& request, const std::string& reason);
  // Answers the upstream's request `id`.
  void Answer(const Json& id, Json result);
  void AnswerError(const Json& id, int code, const std::string& message);
  void Notify(const std::string& method, Json params);

  bool closed() const;
  // Ends the connection (UpstreamTransport::Shutdown); blocking.
  void Shutdown(Duration grace);

 private:
  void OnMessage(Json message, const Json& related);
  void OnClosed(const std::string& why);
  void OnUpstreamRequest(Json message, const Json& related);
  std::shared_ptr<UpstreamRequest> Owner(const Json& related);  // rule 3; mu_ held
  bool SendMessage(const Json& message, std::string* why);

  Handlers handlers_;
  std::unique_ptr<UpstreamTransport> transport_;
  mutable std::mutex mu_;
  Json envelope_;                                                     // guarded by mu_
  int64_t next_id_ = 1;                                               // guarded by mu_
  bool closed_ = false;                                               // guarded by mu_
  std::map<std::string, std::shared_ptr<UpstreamRequest>> pending_;   // by IdKey; mu_
  std::map<std::string, std::shared_ptr<UpstreamRequest>> by_token_;  // mu_
};

}  // namespace keel
