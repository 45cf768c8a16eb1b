#include "server/call/request_coordinator.h"

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "protocol/json_rpc.h"
#include "server/catalog/tool.h"
#include "server/transport/peer_id_key.h"

namespace keel {
namespace {

// The setting that set a timed-out call's limit, as the operator writes it.
std::string TimeoutSetting(TimeoutSource source, bool max) {
  switch (source) {
    case TimeoutSource::kFlags:
      return max ? "--max-timeout" : "--idle-timeout";
    case TimeoutSource::kCatalog:
      return max ? "the catalog's timeouts.maxMs" : "the catalog's timeouts.idleMs";
    case TimeoutSource::kPolicyFile:
      break;
  }
  return max ? "the --policy file's timeouts.max_ms" : "the --policy file's timeouts.idle_ms";
}

// Whole numbers go out as JSON integers ("3", not "3.0"), which is what clients expect.
Json JsonNumber(double value) {
  constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
  if (value < kMaxExactInteger && value > -kMaxExactInteger &&
      value == static_cast<double>(static_cast<long long>(value))) {
    return Json(static_cast<long long>(value));
  }
  return Json(value);
}

// Why an isError result failed: its structuredContent.error.type when there is one.
std::string FailureReason(const Json& result) {
  const auto content = result.find("structuredContent");
  if (content != result.end() && content->is_object()) {
    const auto error = content->find("error");
    if (error != content->end() && error->is_object()) {
      const auto type = error->find("type");
      if (type != error->end() && type->is_string()) return type->get<std::string>();
    }
  }
  return "tool returned isError";
}

bool IsErrorResult(const Json& result) {
  const auto flag = result.find("isError");
  return flag != result.end() && flag->is_boolean() && flag->get<bool>();
}

}  // namespace

RequestCoordinator::RequestCoordinator(OutputSink& sink, const Clock& clock, Options options)
    : own_router_(sink), clock_(clock), options_(std::move(options)) {}

RequestCoordinator::~RequestCoordinator() {
  // Whatever is still here when the server goes away ends with it. Settled here so the
  // settle-once check sees every request accounted for.
  for (auto& [generation, entry] : entries_) {
    if (!entry.settlement.settled()) entry.settlement.Settle(CallState::kShutDown, "server exit");
  }
}

bool RequestCoordinator::InFlight(const Json& id, PeerId peer) const {
  return live_ids_.count(PeerIdKey(peer, id)) != 0;
}

OutputSink& RequestCoordinator::Out(const Entry& entry) {
  OutputSink* sink = router_->Find(entry.identity.exchange);
  if (sink != nullptr) return *sink;
  ++stats_.unroutable;
  return dropped_;
}

std::string RequestCoordinator::CorrelationId(uint64_t generation) const {
  return options_.correlation_prefix + "-" + std::to_string(generation);
}

RequestCoordinator::Admitted RequestCoordinator::Begin(CallIdentity identity, Json progress_token,
                                                       CallLimits limits) {
  Entry entry;
  entry.id_key = IdKey(identity.request_id);
  entry.live_key = PeerIdKey(identity.peer, identity.request_id);
  entry.identity = std::move(identity);
  entry.progress_token = std::move(progress_token);
  entry.limits = limits;
  return Admit(std::move(entry));
}

RequestCoordinator::Admitted RequestCoordinator::BeginTask(CallIdentity identity,
                                                           Json progress_token, Json progress_meta,
                                                           CallLimits limits, SettleFn on_settle) {
  Entry entry;
  entry.identity = std::move(identity);
  entry.identity.request_id = nullptr;
  entry.progress_token = std::move(progress_token);
  entry.progress_meta = std::move(progress_meta);
  entry.task = true;
  entry.on_settle = std::move(on_settle);
  entry.limits = limits;
  return Admit(std::move(entry));
}

RequestCoordinator::Admitted RequestCoordinator::Admit(Entry entry) {
  const uint64_t generation = next_generation_++;
  const TimePoint now = clock_.Now();
  if (entry.identity.client != 0) ++per_client_[entry.identity.client];
  entry.control = std::make_shared<CallControl>();
  entry.accepted = now;
  entry.last_activity = now;
  entry.identity.correlation_id = CorrelationId(generation);
  Admitted admitted{generation, entry.control, entry.identity};
  if (entry.task) {
    ++live_tasks_;
  } else {
    live_ids_[entry.live_key] = generation;
  }
  const TimePoint deadline = DeadlineOf(entry);
  entries_.emplace(generation, std::move(entry));
  Schedule(deadline, generation, Due::kTimeout);
  return admitted;
}

bool RequestCoordinator::PromoteToTask(const Json& request_id, std::string task_id, Duration max,
                                       SettleFn on_settle, PeerId peer) {
  const auto it = live_ids_.find(PeerIdKey(peer, request_id));
  if (it == live_ids_.end()) return false;
  const uint64_t generation = it->second;
  Entry& entry = entries_.at(generation);
  live_ids_.erase(it);
  ++live_tasks_;
  entry.task = true;
  entry.on_settle = std::move(on_settle);
  entry.identity.task_id = std::move(task_id);
  if (!entry.progress_token.is_null()) {
    Out(entry).DiscardProgress(generation);  // on the call's exchange, before it has none
    entry.progress_token = nullptr;
  }
  entry.identity.request_id = nullptr;
  entry.identity.exchange = kNoExchange;
  entry.identity.log_level.reset();
  entry.held_back.reset();
  entry.limits.max = max;
  return true;
}

bool RequestCoordinator::CancelTask(uint64_t generation) {
  Entry* entry = Find(generation);
  if (entry == nullptr || entry->settlement.settled() || !entry->task) return false;
  Settle(generation, CallState::kCancelled, "tasks/cancel");
  return true;
}

RequestCoordinator::Entry* RequestCoordinator::Find(uint64_t generation) {
  auto it = entries_.find(generation);
  return it == entries_.end() ? nullptr : &it->second;
}

TimePoint RequestCoordinator::DeadlineOf(const Entry& entry) const {
  const TimePoint max_at = entry.accepted + entry.limits.max;
  if (entry.limits.idle <= Duration::zero() || entry.waiting_for_client) return max_at;
  return std::min(entry.last_activity + entry.limits.idle, max_at);
}

void RequestCoordinator::Complete(uint64_t generation, Json result, bool threw) {
  Entry* entry = Find(generation);
  if (entry == nullptr) {
    ++stats_.late_results_dropped;  // cannot happen: calls abandoned unstarted never return
    return;
  }
  if (entry->settlement.settled()) {
    // Cancelled, timed out or shut down first: the result is dropped, the slot freed.
    ++stats_.late_results_dropped;
    if (entry->held) {
      spdlog::info("tool '{}' ({}) returned after its call settled; its worker slot is free",
                   entry->identity.tool_name, CorrelationId(generation));
      if (on_released_) on_released_();
    }
    Erase(generation);
    return;
  }
  CallState state = CallState::kCompleted;
  std::string reason = "result";
  if (threw) {
    state = CallState::kFailed;
    reason = "tool threw";
  } else if (IsErrorResult(result)) {
    state = CallState::kFailed;
    reason = FailureReason(result);
  }
  Settle(generation, state, std::move(reason),
         CallAnswer(std::in_place_type<Json>, std::move(result)));
}

void RequestCoordinator::WaitForClient(uint64_t generation, bool waiting) {
  Entry* entry = Find(generation);
  if (entry == nullptr || entry->settlement.settled()) return;
  entry->waiting_for_client = waiting;
  if (waiting) return;
  entry->last_activity = clock_.Now();
  Schedule(DeadlineOf(*entry), generation, Due::kTimeout);
}

void RequestCoordinator::RestartIdleClockAt(uint64_t generation, TimePoint attempt_at) {
  Entry* entry = Find(generation);
  if (entry == nullptr || entry->settlement.settled()) return;
  entry->last_activity = std::max(entry->last_activity, attempt_at);
}

void RequestCoordinator::Progress(uint64_t generation, double progress, std::optional<double> total,
                                  std::string message) {
  Entry* entry = Find(generation);
  if (entry == nullptr || entry->settlement.settled()) {
    ++stats_.late_progress_dropped;
    return;
  }
  if (std::isnan(progress) || (entry->last_progress && progress <= *entry->last_progress)) {
    ++stats_.stale_progress_dropped;
    return;
  }
  const TimePoint now = clock_.Now();
  entry->last_progress = progress;
  entry->last_activity = now;  // the idle clock restarts; the alarm re-reads it when due
  if (entry->progress_token.is_null()) return;

  Json params = {{"progressToken", entry->progress_token}, {"progress", JsonNumber(progress)}};
  if (total && !std::isnan(*total)) params["total"] = JsonNumber(*total);
  if (!message.empty()) params["message"] = std::move(message);
  if (!entry->progress_meta.is_null()) params["_meta"] = entry->progress_meta;
  std::string line = EncodeNotification("notifications/progress", params);
  if (!entry->last_sent || now - *entry->last_sent >= options_.progress_interval) {
    SendProgressLine(*entry, generation, std::move(line), now);
    return;
  }
  entry->held_back = std::move(line);  // the newest value wins
  if (!entry->flush_scheduled) {
    entry->flush_scheduled = true;
    Schedule(*entry->last_sent + options_.progress_interval, generation, Due::kProgressFlush);
  }
}

void RequestCoordinator::SendProgressLine(Entry& entry, uint64_t generation, std::string line,
                                          TimePoint now) {
  Out(entry).SendProgress(generation, std::move(line));
  entry.last_sent = now;
}

bool RequestCoordinator::Cancel(const Json& request_id, PeerId peer) {
  if (!IsValidId(request_id)) {
    ++stats_.ignored_cancels;
    return false;
  }
  auto it = live_ids_.find(PeerIdKey(peer, request_id));
  if (it == live_ids_.end()) {
    ++stats_.ignored_cancels;  // unknown, already settled, or not a tools/call
    return false;
  }
  Settle(it->second, CallState::kCancelled, "notifications/cancelled");
  return true;
}

template <typename Matches>
size_t RequestCoordinator::CancelWhere(Matches matches, const char* reason) {
  std::vector<uint64_t> unsettled;
  for (const auto& [generation, entry] : entries_) {
    if (!entry.task && !entry.settlement.settled() && matches(entry.identity)) {
      unsettled.push_back(generation);
    }
  }
  std::sort(unsettled.begin(), unsettled.end());  // in the order the calls arrived
  for (uint64_t generation : unsettled) Settle(generation, CallState::kCancelled, reason);
  return unsettled.size();
}

size_t RequestCoordinator::CancelExchange(ExchangeId exchange) {
  if (exchange == kNoExchange) return 0;
  return CancelWhere([exchange](const CallIdentity& call) { return call.exchange == exchange; },
                     "exchange closed");
}

size_t RequestCoordinator::CancelPeer(PeerId peer) {
  return CancelWhere([peer](const CallIdentity& call) { return call.peer == peer; }, "peer gone");
}

size_t RequestCoordinator::ShutDownAll(int code, std::string_view message) {
  std::vector<uint64_t> unsettled;
  unsettled.reserve(live());
  for (const auto& [generation, entry] : entries_) {
    if (!entry.settlement.settled()) unsettled.push_back(generation);
  }
  std::sort(unsettled.begin(), unsettled.end());  // answer in the order the calls arrived
  for (uint64_t generation : unsettled) {
    Settle(generation, CallState::kShutDown, "server shutting down",
           CallAnswer(JsonRpcError{code, std::string(message)}));
  }
  return unsettled.size();
}

void RequestCoordinator::MarkNeedsResync(uint64_t stream) {
  Entry* entry = Find(stream);
  if (entry == nullptr || entry->needs_resync) return;
  entry->needs_resync = true;
  ++stats_.resyncs;
  spdlog::info("request {} ({}): progress dropped for a slow client (needs_resync)", entry->id_key,
               CorrelationId(stream));
}

void RequestCoordinator::Settle(uint64_t generation, CallState state, std::string reason,
                                CallAnswer answer) {
  Entry& entry = entries_.at(generation);
  last_settled_ = {state, reason};
  if (Json* result = std::get_if<Json>(&answer); result != nullptr && result_filter_) {
    *result = result_filter_(entry.identity, std::move(*result));
  }
  if (on_settled_) on_settled_(generation, state, reason);
  entry.settlement.Settle(state, std::move(reason));
  entry.held_back.reset();
  if (state == CallState::kCancelled && !entry.progress_token.is_null()) {
    Out(entry).DiscardProgress(generation);  // queued before the cancel: never written after it
  }
  if (state == CallState::kCancelled && !entry.task) Out(entry).EndUnanswered();
  if (entry.task) {
    --live_tasks_;
    // Moved out first: it runs once, and may start other work that adds entries.
    SettleFn on_settle = std::move(entry.on_settle);
    entry.on_settle = nullptr;
    on_settle(state, std::move(answer));
  } else {
    if (const Json* result = std::get_if<Json>(&answer)) {
      Out(entry).SendResponse(result_encoder_ ? result_encoder_(entry.identity, *result)
                                              : EncodeResult(entry.identity.request_id, *result));
    } else if (const JsonRpcError* error = std::get_if<JsonRpcError>(&answer)) {
      Out(entry).SendResponse(EncodeError(entry.identity.request_id, error->code, error->message));
    }
    live_ids_.erase(entry.live_key);
  }

  const bool worker_returned = state == CallState::kCompleted || state == CallState::kFailed;
  if (worker_returned) {
    Erase(generation);
  } else if (entry.control->TryAbandon()) {
    ++stats_.never_started;  // still queued: it will never run
    Erase(generation);
  } else {
    // Running: ask it to stop; it stays counted until its worker returns.
    if (state == CallState::kCancelled) entry.control->MarkWithdrawn();
    entry.control->token().Cancel();
    Schedule(clock_.Now() + options_.hold_after, generation, Due::kHoldCheck);
  }
  NotifyIfIdle();
}

void RequestCoordinator::OnTimeout(Entry& entry, uint64_t generation, TimePoint now) {
  ++stats_.timeouts;
  const bool max = now >= entry.accepted + entry.limits.max;
  const long long elapsed_ms = ToMillis(now - entry.accepted);
  const long long limit_ms = ToMillis(max ? entry.limits.max : entry.limits.idle);
  const std::string correlation_id = CorrelationId(generation);
  const std::string source =
      max && entry.task ? "the task's ttl" : TimeoutSetting(entry.limits.source, max);
  const std::string text =
      max ? "Tool '" + entry.identity.tool_name + "' timed out: it ran past its maximum of " +
                std::to_string(limit_ms) + " ms (" + source + ") and was cancelled after " +
                std::to_string(elapsed_ms) + " ms. correlation_id " + correlation_id
          : "Tool '" + entry.identity.tool_name + "' timed out: it reported no progress for " +
                std::to_string(limit_ms) + " ms (" + source + ") and was cancelled after " +
                std::to_string(elapsed_ms) + " ms. correlation_id " + correlation_id;
  Json error = {{"type", "timeout"},
                {"layer", max ? "max" : "idle"},
                {"elapsed_ms", elapsed_ms},
                {"limit_ms", limit_ms},
                {"correlation_id", correlation_id}};
  spdlog::info("request {} ({}) timed out on the {} clock after {} ms", entry.id_key,
               correlation_id, max ? "max" : "idle", elapsed_ms);
  Settle(generation, CallState::kTimedOut, max ? "max timeout" : "idle timeout",
         CallAnswer(std::in_place_type<Json>, ErrorResult(text, error)));
}

void RequestCoordinator::Schedule(TimePoint when, uint64_t generation, Due what) {
  alarms_.push(Alarm{when, generation, what});
  CompactAlarms();
}

bool RequestCoordinator::Wanted(const Alarm& alarm) {
  const Entry* entry = Find(alarm.generation);
  if (entry == nullptr) return false;
  switch (alarm.what) {
    case Due::kTimeout:
      return !entry->settlement.settled();
    case Due::kProgressFlush:
      return !entry->settlement.settled();
    case Due::kHoldCheck:
      return !entry->held;
  }
  return false;
}

std::optional<TimePoint> RequestCoordinator::NextDeadline() {
  while (!alarms_.empty() && !Wanted(alarms_.top())) alarms_.pop();
  if (alarms_.empty()) return std::nullopt;
  return alarms_.top().when;
}

void RequestCoordinator::RunDue() {
  const TimePoint now = clock_.Now();
  while (!alarms_.empty() && alarms_.top().when <= now) {
    const Alarm alarm = alarms_.top();
    alarms_.pop();
    Entry* entry = Find(alarm.generation);
    if (entry == nullptr) continue;  // settled and gone
    switch (alarm.what) {
      case Due::kTimeout: {
        if (entry->settlement.settled()) break;
        const TimePoint deadline = DeadlineOf(*entry);
        if (deadline > now) {
          Schedule(deadline, alarm.generation, Due::kTimeout);  // progress moved it
        } else {
          OnTimeout(*entry, alarm.generation, now);
        }
        break;
      }
      case Due::kProgressFlush:
        entry->flush_scheduled = false;
        if (entry->settlement.settled() || !entry->held_back) break;
        SendProgressLine(*entry, alarm.generation, std::move(*entry->held_back), now);
        entry->held_back.reset();
        break;
      case Due::kHoldCheck:
        if (entry->held) break;
        entry->held = true;  // settled, and its worker is still running
        ++stats_.held;
        spdlog::warn(
            "tool '{}' ({}) ignored cancellation: its worker is still busy {} ms "
            "after the call settled",
            entry->identity.tool_name, CorrelationId(alarm.generation),
            // The check was scheduled hold_after past the settle.
            ToMillis(now - (alarm.when - options_.hold_after)));
        if (on_held_) on_held_();
        break;
    }
  }
}

void RequestCoordinator::CompactAlarms() {
  // Calls that finish leave their timeout alarm behind; drop those once they pile up,
  // so a busy server keeps about one alarm per call in flight.
  if (alarms_.size() <= 2 * entries_.size() + 1024) return;
  std::vector<Alarm> kept;
  kept.reserve(entries_.size() * 2);
  while (!alarms_.empty()) {
    const Alarm alarm = alarms_.top();
    alarms_.pop();
    if (Wanted(alarm)) kept.push_back(alarm);
  }
  alarms_ = decltype(alarms_)(std::greater<Alarm>(), std::move(kept));
}

std::optional<CallState> RequestCoordinator::StateOf(const Json& id, PeerId peer) const {
  const auto it = live_ids_.find(PeerIdKey(peer, id));
  if (it == live_ids_.end()) return std::nullopt;
  const Entry& entry = entries_.at(it->second);
  return entry.control->started() ? CallState::kRunning : CallState::kQueued;
}

void RequestCoordinator::Erase(uint64_t generation) {
  const auto it = entries_.find(generation);
  if (it == entries_.end()) return;
  if (const uint64_t client = it->second.identity.client; client != 0) {
    const auto count = per_client_.find(client);
    if (count != per_client_.end() && --count->second == 0) per_client_.erase(count);
  }
  entries_.erase(it);
}

void RequestCoordinator::NotifyIfIdle() {
  if (live() == 0 && on_idle_) on_idle_();
}

}  // namespace keel
