#include "server/upstream/upstream_client.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "protocol/json_rpc.h"
#include "server/runtime/deadline_timer.h"

namespace keel {
namespace {

bool IsQuestion(const std::string& method) {
  return method == "elicitation/create" || method == "sampling/createMessage" ||
         method == "roots/list";
}

}  // namespace

UpstreamRequest::Event UpstreamRequest::Wait(const CancellationToken& token, TimePoint deadline) {
  return CanSuspend() ? SuspendingWait(token, deadline) : BlockingWait(token, deadline);
}

std::optional<UpstreamRequest::Event> UpstreamRequest::ReadyLocked(const CancellationToken& token,
                                                                   TimePoint deadline) const {
  if (!asks_.empty()) return Event::kAsked;
  if (answered_) return Event::kAnswered;
  if (lost_) return Event::kLost;
  if (token.IsCancelled()) return Event::kCancelled;
  if (std::chrono::steady_clock::now() >= deadline) return Event::kDeadline;
  return std::nullopt;
}

UpstreamRequest::Event UpstreamRequest::BlockingWait(const CancellationToken& token,
                                                     TimePoint deadline) {
  const CancellationToken::Registration registration = token.OnCancel([this] {
    std::lock_guard<std::mutex> lock(mu_);  // ordered with the waiter's check of the token
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (std::optional<Event> event = ReadyLocked(token, deadline)) return *event;
    if (deadline == TimePoint::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, deadline);
    }
  }
}

UpstreamRequest::Event UpstreamRequest::SuspendingWait(const CancellationToken& token,
                                                       TimePoint deadline) {
  // The canceller and the timer hold the request weakly: either may fire after this Wait
  // has returned and the request is gone.
  const std::weak_ptr<UpstreamRequest> weak = weak_from_this();
  const auto wake = [weak] {
    if (std::shared_ptr<UpstreamRequest> self = weak.lock()) {
      ResumeFn waiter;
      {
        std::lock_guard<std::mutex> lock(self->mu_);
        waiter = self->TakeWaiterLocked();
      }
      self->Wake(std::move(waiter));
    }
  };
  const CancellationToken::Registration registration = token.OnCancel(wake);
  uint64_t timer = 0;
  if (deadline != TimePoint::max()) timer = DeadlineTimer::Shared().Arm(deadline, wake);
  std::optional<Event> event;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      event = ReadyLocked(token, deadline);
    }
    if (event) break;
    // The arm runs once this job is switched out. It parks the ResumeFn where the notifiers
    // take it, unless the event came meanwhile: then it resumes at once. Either way the
    // ResumeFn is called exactly once, by whoever takes it out of waiter_ first.
    Suspend([this, &token, deadline](ResumeFn resume) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!ReadyLocked(token, deadline)) {
          waiter_ = std::move(resume);
          return;
        }
      }
      resume();
    });
  }
  if (timer != 0) DeadlineTimer::Shared().Disarm(timer);
  return *event;
}

ResumeFn UpstreamRequest::TakeWaiterLocked() {
  ResumeFn waiter = std::move(waiter_);
  waiter_ = nullptr;
  return waiter;
}

void UpstreamRequest::Wake(ResumeFn waiter) {
  cv_.notify_all();
  if (waiter) waiter();
}

std::optional<Json> UpstreamRequest::TakeAsk() {
  std::lock_guard<std::mutex> lock(mu_);
  if (asks_.empty()) return std::nullopt;
  Json ask = std::move(asks_.front());
  asks_.pop_front();
  return ask;
}

UpstreamClient::UpstreamClient(Handlers handlers) : handlers_(std::move(handlers)) {}

UpstreamClient::~UpstreamClient() { Shutdown(Duration::zero()); }

UpstreamEvents UpstreamClient::Events() {
  UpstreamEvents events;
  events.on_message = [this](Json message, const Json& related) {
    OnMessage(std::move(message), related);
  };
  events.on_closed = [this](std::string why) { OnClosed(why); };
  return events;
}

void UpstreamClient::Attach(std::unique_ptr<UpstreamTransport> transport) {
  transport_ = std::move(transport);
}

void UpstreamClient::set_envelope(Json meta) {
  std::lock_guard<std::mutex> lock(mu_);
  envelope_ = std::move(meta);
}

bool UpstreamClient::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

void UpstreamClient::Shutdown(Duration grace) {
  if (transport_) transport_->Shutdown(grace);
}

bool UpstreamClient::SendMessage(const Json& message, std::string* why) {
  if (!transport_) {
    *why = "no upstream connection";
    return false;
  }
  return transport_->Send(message, why);
}

std::shared_ptr<UpstreamRequest> UpstreamClient::Start(const std::string& method, Json params,
                                                       StartOptions options) {
  auto request = std::make_shared<UpstreamRequest>();
  request->accepts_asks_ = options.accepts_asks;
  request->progress_ = std::move(options.progress);
  request->log_ = std::move(options.log);
  if (!params.is_object()) params = Json::object();
  {
    std::lock_guard<std::mutex> lock(mu_);
    request->id_ = next_id_++;
    if (!envelope_.is_null()) {
      Json& meta = params["_meta"];
      if (!meta.is_object()) meta = Json::object();
      for (const auto& [key, value] : envelope_.items()) meta[key] = value;
    }
    if (request->progress_ && !options.progress_token.empty()) {
      request->token_ = options.progress_token;
      by_token_[request->token_] = request;
    } else if (request->progress_) {
      request->token_ = "keel-" + std::to_string(request->id_.get<int64_t>());
      params["_meta"]["progressToken"] = request->token_;
      by_token_[request->token_] = request;
    }
    if (closed_) {
      request->lost_ = true;
      request->sent_ = false;
      request->lost_reason_ = "the upstream connection is closed";
      by_token_.erase(request->token_);
      return request;
    }
    pending_[IdKey(request->id_)] = request;
  }
  Json message = {{"jsonrpc", "2.0"}, {"id", request->id_}, {"method", method}};
  message["params"] = std::move(params);
  std::string why;
  if (!SendMessage(message, &why)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.erase(IdKey(request->id_));
      by_token_.erase(request->token_);
    }
    std::lock_guard<std::mutex> lock(request->mu_);
    request->lost_ = true;
    request->sent_ = false;
    request->lost_reason_ = why;
  }
  return request;
}

std::optional<Json> UpstreamClient::Request(const std::string& method, Json params,
                                            TimePoint deadline, const CancellationToken& stop,
                                            std::string* why) {
  std::shared_ptr<UpstreamRequest> request = Start(method, std::move(params));
  while (true) {
    switch (request->Wait(stop, deadline)) {
      case UpstreamRequest::Event::kAnswered:
        if (request->is_error()) return Json{{"error", request->answer()}};
        return request->answer();
      case UpstreamRequest::Event::kLost:
        *why = request->lost_reason();
        return std::nullopt;
      case UpstreamRequest::Event::kAsked:
        // Not asked for (accepts_asks is false): defensive only.
        while (std::optional<Json> ask = request->TakeAsk()) {
          AnswerError((*ask)["id"], kInternalError, "keel asks nothing of its client here");
        }
        continue;
      case UpstreamRequest::Event::kCancelled:
        Cancel(request, "keel is shutting down");
        *why = "keel is shutting down";
        return std::nullopt;
      case UpstreamRequest::Event::kDeadline:
        Cancel(request, "no answer in time");
        *why = "no answer to " + method + " in time";
        return std::nullopt;
    }
  }
}

void UpstreamClient::Cancel(const std::shared_ptr<UpstreamRequest>& request,
                            const std::string& reason) {
  bool was_pending = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_pending = pending_.erase(IdKey(request->id_)) > 0;
    by_token_.erase(request->token_);
  }
  if (!was_pending) return;
  Notify("notifications/cancelled", Json{{"requestId", request->id_}, {"reason", reason}});
  if (transport_) transport_->Abandon(request->id_);
}

void UpstreamClient::Answer(const Json& id, Json result) {
  std::string why;
  if (!SendMessage(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}, &why)) {
    spdlog::warn("upstream: could not answer its request {}: {}", id.dump(), why);
  }
}

void UpstreamClient::AnswerError(const Json& id, int code, const std::string& message) {
  std::string why;
  const Json error = {{"code", code}, {"message", message}};
  if (!SendMessage(Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", error}}, &why)) {
    spdlog::warn("upstream: could not answer its request {}: {}", id.dump(), why);
  }
}

void UpstreamClient::Notify(const std::string& method, Json params) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!envelope_.is_null()) {
      Json& meta = params["_meta"];
      if (!meta.is_object()) meta = Json::object();
      for (const auto& [key, value] : envelope_.items()) meta[key] = value;
    }
  }
  Json message = {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
  std::string why;
  if (!SendMessage(message, &why)) spdlog::debug("upstream: {} not sent: {}", method, why);
}

std::shared_ptr<UpstreamRequest> UpstreamClient::Owner(const Json& related) {
  if (!related.is_null()) {
    const auto it = pending_.find(IdKey(related));
    if (it != pending_.end() && it->second->accepts_asks_) return it->second;
    return nullptr;
  }
  std::shared_ptr<UpstreamRequest> only;
  for (const auto& [key, request] : pending_) {
    if (!request->accepts_asks_) continue;
    if (only) return nullptr;  // two calls in flight: which one asks cannot be told
    only = request;
  }
  return only;
}

void UpstreamClient::OnUpstreamRequest(Json message, const Json& related) {
  const std::string method = message.value("method", "");
  const Json id = message["id"];
  if (method == "ping") return Answer(id, Json::object());
  if (!IsQuestion(method)) {
    return AnswerError(id, kMethodNotFound, "keel does not serve " + method + " to an upstream");
  }
  std::shared_ptr<UpstreamRequest> owner;
  {
    std::lock_guard<std::mutex> lock(mu_);
    owner = Owner(related);
  }
  if (!owner) {
    if (method == "roots/list") return Answer(id, Json{{"roots", Json::array()}});
    spdlog::warn("upstream asked {} while no single call of a client can answer it: refused",
                 method);
    return AnswerError(id, kInternalError,
                       "keel cannot tell which of its clients' calls this " + method +
                           " belongs to (several calls run, or none)");
  }
  ResumeFn waiter;
  {
    std::lock_guard<std::mutex> lock(owner->mu_);
    owner->asks_.push_back(Json{{"id", id}, {"method", method}, {"params", message["params"]}});
    waiter = owner->TakeWaiterLocked();
  }
  owner->Wake(std::move(waiter));  // after unlocking: see OnMessage
}

void UpstreamClient::OnMessage(Json message, const Json& related) {
  if (message.contains("method")) {
    if (message.contains("id")) return OnUpstreamRequest(std::move(message), related);
    const std::string method = message["method"].get<std::string>();
    Json params = message.value("params", Json::object());
    if (method == "notifications/progress" && params.is_object()) {
      const Json token = params.value("progressToken", Json());
      std::shared_ptr<UpstreamRequest> request;
      {
        std::lock_guard<std::mutex> lock(mu_);
        const auto it =
            token.is_string() ? by_token_.find(token.get<std::string>()) : by_token_.end();
        if (it != by_token_.end()) request = it->second;
      }
      const Json progress = params.value("progress", Json());
      if (request && progress.is_number()) {
        std::optional<double> total;
        if (params.value("total", Json()).is_number()) total = params["total"].get<double>();
        const Json text = params.value("message", Json());
        request->progress_(progress.get<double>(), total,
                           text.is_string() ? text.get<std::string>() : std::string());
      }
      return;
    }
    if (method == "notifications/message" && params.is_object()) {
      std::shared_ptr<UpstreamRequest> owner;
      {
        std::lock_guard<std::mutex> lock(mu_);
        owner = Owner(related);
      }
      const Json level = params.value("level", Json());
      const std::optional<LoggingLevel> parsed =
          level.is_string() ? ParseLoggingLevel(level.get<std::string>()) : std::nullopt;
      if (owner && owner->log_ && parsed) {
        const Json data = params.value("data", Json());
        owner->log_(*parsed, data.is_string() ? data.get<std::string>() : data.dump());
        return;
      }
    }
    if (method == "notifications/cancelled") return;  // keel's questions are answered once
    if (handlers_.on_notification) handlers_.on_notification(method, params);
    return;
  }
  std::shared_ptr<UpstreamRequest> request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = pending_.find(IdKey(message["id"]));
    if (it == pending_.end()) {
      spdlog::debug("upstream answered request {} that keel no longer waits for: dropped",
                    message["id"].dump());
      return;
    }
    request = it->second;
    pending_.erase(it);
    by_token_.erase(request->token_);
  }
  ResumeFn waiter;
  {
    std::lock_guard<std::mutex> lock(request->mu_);
    request->answered_ = true;
    if (message.contains("error")) {
      request->is_error_ = true;
      request->answer_ = std::move(message["error"]);
    } else {
      request->answer_ = std::move(message["result"]);
    }
    waiter = request->TakeWaiterLocked();
  }
  // Notified after unlocking (`request` keeps it alive): a waiter woken under the lock
  // blocks on it at once and must be woken a second time (two futex calls and a context
  // switch more per forwarded call, seen with strace).
  request->Wake(std::move(waiter));
}

void UpstreamClient::OnClosed(const std::string& why) {
  std::map<std::string, std::shared_ptr<UpstreamRequest>> lost;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    lost.swap(pending_);
    by_token_.clear();
  }
  for (const auto& [key, request] : lost) {
    ResumeFn waiter;
    {
      std::lock_guard<std::mutex> lock(request->mu_);
      request->lost_ = true;
      request->lost_reason_ = why;
      waiter = request->TakeWaiterLocked();
    }
    request->Wake(std::move(waiter));
  }
  if (handlers_.on_closed) handlers_.on_closed(why);
}

}  // namespace keel
