#include "server/call/call_inbox.h"

#include <utility>

namespace keel {

template <typename Fn>
void CallInbox::Port::Post(Fn fn) const {
  loop_->Post([inbox = inbox_, fn = std::move(fn)]() mutable {
    if (const std::shared_ptr<CallInbox> live = inbox.lock()) fn(*live);
  });
}

void CallInbox::Port::Progress(uint64_t generation, double progress, std::optional<double> total,
                               std::string message) const {
  Post([generation, progress, total, message = std::move(message)](CallInbox& in) mutable {
    in.coordinator_.Progress(generation, progress, total, std::move(message));
  });
}

void CallInbox::Port::Log(uint64_t generation, std::string tool, LoggingLevel level,
                          std::string message) const {
  Post([generation, tool = std::move(tool), level,
        message = std::move(message)](CallInbox& in) mutable {
    // Late (after the settle), like progress; otherwise at the request's level: a modern
    // request's own, a legacy one's its peer's; on the call's exchange.
    const CallIdentity* call = in.coordinator_.UnsettledIdentity(generation);
    if (call == nullptr) return;
    const std::optional<LoggingLevel> threshold =
        call->modern ? call->log_level : in.log_.LevelOf(call->peer);
    in.log_.Log(threshold, level, tool, std::move(message), call->exchange);
  });
}

void CallInbox::Port::RetryScheduled(uint64_t generation, Duration delay) const {
  Post([generation, delay](CallInbox& in) {
    in.coordinator_.RestartIdleClockAt(generation, in.loop_.clock().Now() + delay);
  });
}

void CallInbox::Port::Returned(uint64_t generation, std::string task_id, Json result, bool threw,
                               bool stopped) const {
  Post([generation, task_id = std::move(task_id), result = std::move(result), threw,
        stopped](CallInbox& in) mutable {
    // A call promoted to a task while it ran (RequestCoordinator::PromoteToTask) did not
    // know its task when it was handed over.
    if (task_id.empty() && in.tasks_ != nullptr) task_id = in.tasks_->TaskOfWork(generation);
    if (task_id.empty()) return in.coordinator_.Complete(generation, std::move(result), threw);
    Json returned = result;
    in.coordinator_.Complete(generation, std::move(result), threw);
    in.tasks_->OnWorkEnded(
        task_id,
        stopped ? TaskManager::WorkEnd::kStoppedAtCheckpoint : TaskManager::WorkEnd::kReturned,
        std::move(returned));
  });
}

void CallInbox::Port::NeverStarted(uint64_t generation, std::string task_id) const {
  Post([generation, task_id = std::move(task_id)](CallInbox& in) mutable {
    if (task_id.empty() && in.tasks_ != nullptr) task_id = in.tasks_->TaskOfWork(generation);
    if (task_id.empty()) return;
    in.tasks_->OnWorkEnded(task_id, TaskManager::WorkEnd::kNeverStarted, Json());
  });
}

void CallInbox::Port::AskClient(uint64_t generation, Json requests,
                                std::shared_ptr<ClientAnswers> box) const {
  Post([generation, requests = std::move(requests), box = std::move(box)](CallInbox& in) {
    const CallIdentity* call = in.coordinator_.UnsettledIdentity(generation);
    if (in.client_ == nullptr || call == nullptr) {
      return box->Finish(ClientAnswers::End::kAbandoned, Json(), Json("the call settled"));
    }
    // The questions go where the call's answer will (its exchange), to the peer that asked.
    const ExchangeId exchange = call->exchange;
    const PeerId peer = call->peer;
    in.coordinator_.WaitForClient(generation, true);
    in.client_->Ask(requests, box, exchange, peer, generation);
  });
}

void CallInbox::Port::AskEnded(uint64_t generation, std::shared_ptr<ClientAnswers> box) const {
  Post([generation, box = std::move(box)](CallInbox& in) {
    if (in.client_ != nullptr) in.client_->Abandon(box.get());
    in.coordinator_.WaitForClient(generation, false);
  });
}

void CallInbox::Port::BecomeTask(uint64_t generation, Json params) const {
  Post([generation, params = std::move(params)](CallInbox& in) mutable {
    if (in.promote_) in.promote_(generation, std::move(params));
  });
}

}  // namespace keel
