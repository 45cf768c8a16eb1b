// TaskManager's plumbing: the store-job count, the requests it answers later (invariant 5),
// status notifications, shutdown and the periodic upkeep. The tasks/* methods are in
// task_methods.cc, task creation in task_creation.cc, the work's fate in task_lifecycle.cc.
#include "server/tasks/task_manager.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "protocol/json_rpc.h"
#include "server/tasks/task_wire.h"
#include "server/transport/peer_id_key.h"

namespace keel {

TaskManager::TaskManager(EventLoop& loop, OutputSink& sink, TaskStoreThread& store,
                         TaskOptions options, std::function<int64_t()> now_ms)
    : loop_(loop),
      own_router_(sink),
      store_(store),
      options_(std::move(options)),
      now_ms_(std::move(now_ms)) {}

void TaskManager::JobDone() {
  --jobs_in_flight_;
  if (jobs_in_flight_ == 0 && on_idle_) on_idle_();
}

void TaskManager::Track(const ReplyTo& to) {
  pending_[PeerIdKey(to.peer, to.id)] = Pending{to.exchange, to.peer, false};
}

TaskManager::Pending* TaskManager::PendingOf(const ReplyTo& to) {
  const auto it = pending_.find(PeerIdKey(to.peer, to.id));
  return it == pending_.end() ? nullptr : &it->second;
}

bool TaskManager::InFlight(const Json& id, PeerId peer) const {
  return pending_.count(PeerIdKey(peer, id)) != 0;
}

bool TaskManager::CancelRequest(const Json& id, PeerId peer) {
  if (!IsValidId(id)) return false;
  auto it = pending_.find(PeerIdKey(peer, id));
  if (it == pending_.end()) return false;
  it->second.cancelled = true;  // its answer is dropped when it comes
  SinkOf(*router_, it->second.exchange, dropped_).EndUnanswered();
  return true;
}

template <typename Matches>
size_t TaskManager::CancelWhere(Matches matches) {
  size_t cancelled = 0;
  for (auto& [key, pending] : pending_) {
    if (pending.cancelled || !matches(pending)) continue;
    pending.cancelled = true;  // its answer is dropped when it comes
    SinkOf(*router_, pending.exchange, dropped_).EndUnanswered();
    ++cancelled;
  }
  return cancelled;
}

size_t TaskManager::CancelExchange(ExchangeId exchange) {
  if (exchange == kNoExchange) return 0;
  return CancelWhere([exchange](const Pending& pending) { return pending.exchange == exchange; });
}

size_t TaskManager::CancelPeer(PeerId peer) {
  return CancelWhere([peer](const Pending& pending) { return pending.peer == peer; });
}

void TaskManager::Answer(const ReplyTo& to, const std::string& line) {
  auto it = pending_.find(PeerIdKey(to.peer, to.id));
  if (it == pending_.end()) return;  // answered already
  const Pending pending = it->second;
  pending_.erase(it);
  if (!pending.cancelled) SinkOf(*router_, pending.exchange, dropped_).SendResponse(line);
}

void TaskManager::AnswerResult(const ReplyTo& to, const Json& result, TaskDialect dialect) {
  if (dialect == TaskDialect::kExtension && stamp_ != nullptr) {
    return Answer(to, EncodeResultAs(ModernWireForm(true), to.id, result, *stamp_));
  }
  Answer(to, EncodeResult(to.id, result));
}

void TaskManager::AnswerError(const ReplyTo& to, int code, const std::string& message,
                              const Json& data) {
  Answer(to, EncodeError(to.id, code, message, data));
}

void TaskManager::NotifyStatus(const TaskRecord& task) {
  if (!client_ready_ || IsExtensionTask(task)) return;  // invariant 7
  // It concerns no request (invariant 8).
  SinkOf(*router_, kNoExchange, dropped_)
      .SendResponse(EncodeNotification("notifications/tasks/status", TaskJson(task)));
}

std::string TaskManager::TaskOfWork(uint64_t generation) const {
  for (const auto& [task_id, live] : live_) {
    if (live.generation == generation) return task_id;
  }
  return std::string();
}

void TaskManager::ShutDown() {
  for (auto& [task_id, live] : live_) {
    for (const ReplyTo& waiter : live.waiters) {
      AnswerError(waiter, kInternalError,
                  "Server shutting down before task " + task_id + " finished",
                  Json{{"taskId", task_id}});
    }
    live.waiters.clear();
  }
}

void TaskManager::StartMaintenance(std::function<void(TaskStore&)> recover) {
  auto upkeep = [recover, now_ms = now_ms_](TaskStore& store) {
    recover(store);
    if (const size_t swept = store.SweepExpired(now_ms()); swept > 0) {
      spdlog::info("tasks: deleted {} expired task(s)", swept);
    }
  };
  store_.Post(upkeep);  // first, before any request is read (FIFO)
  // Timers re-arm themselves; the loop runs them only while it runs, and this manager
  // lives as long as the loop runs.
  const Duration renew_every = Millis(std::max<int64_t>(options_.lease_ms / 3, 1000));
  renew_timer_ = [this, renew_every] {
    if (!live_.empty()) {
      store_.Post([owner = options_.owner, until = now_ms_() + options_.lease_ms](
                      TaskStore& store) { store.RenewLeases(owner, until); });
    }
    loop_.AddTimer(loop_.clock().Now() + renew_every, renew_timer_);
  };
  const Duration upkeep_every = Millis(60000);
  upkeep_timer_ = [this, upkeep, upkeep_every] {
    store_.Post(upkeep);
    loop_.AddTimer(loop_.clock().Now() + upkeep_every, upkeep_timer_);
  };
  loop_.AddTimer(loop_.clock().Now() + renew_every, renew_timer_);
  loop_.AddTimer(loop_.clock().Now() + upkeep_every, upkeep_timer_);
  if (options_.cancel_watch_ms > 0) {
    const Duration watch_every = Millis(options_.cancel_watch_ms);
    watch_timer_ = [this, watch_every] {
      WatchForeignCancels();
      loop_.AddTimer(loop_.clock().Now() + watch_every, watch_timer_);
    };
    loop_.AddTimer(loop_.clock().Now() + watch_every, watch_timer_);
  }
}

}  // namespace keel
