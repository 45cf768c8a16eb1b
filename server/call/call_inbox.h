// CallInbox: where the worker side of calls reports back to the loop. A call's job (CallRunner)
// reports its tool's progress and log messages, the retries it schedules, and its return; each
// report is posted to the loop and handed there to the RequestCoordinator (which drops what
// comes after a settle), the ClientLog and, for a task's work, the TaskManager.
//
// Threads: the Port's methods may be called from any thread; they only post. The inbox's
// handlers run on the loop thread.
// Lifetime: the Session owns the inbox (by shared_ptr) and the coordinator, log and task
// manager it reaches. Jobs hold only a Port: the loop and a weak_ptr, locked on the loop when
// the report runs. So a job that returns after its Session is gone (a test harness tearing
// down while a worker still runs) reaches nothing: its reports are dropped. The loop must
// outlive the worker pool that runs the jobs (it does: the server declares it first).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "server/call/request_coordinator.h"
#include "server/input/client_requests.h"
#include "server/runtime/event_loop.h"
#include "server/session/client_log.h"
#include "server/tasks/task_manager.h"

namespace keel {

using Json = nlohmann::json;

class CallInbox {
 public:
  // `tasks` may be null (no task store): then no report names a task. `client` may be null:
  // then no question reaches the client (AskClient ends abandoned).
  CallInbox(EventLoop& loop, RequestCoordinator& coordinator, ClientLog& log, TaskManager* tasks,
            ClientRequests* client = nullptr)
      : loop_(loop), coordinator_(coordinator), log_(log), tasks_(tasks), client_(client) {}

  // What BecomeTask reaches on the loop: the Session's promotion of an unsettled call
  // (ignored once the call settled or became a task). Unset: a tool's BecomeTask does nothing.
  using PromoteFn = std::function<void(uint64_t generation, Json params)>;
  void set_promote(PromoteFn fn) { promote_ = std::move(fn); }

  // A job's end of the inbox (any thread).
  class Port {
   public:
    Port(EventLoop& loop, std::weak_ptr<CallInbox> inbox)
        : loop_(&loop), inbox_(std::move(inbox)) {}

    // The tool's progress report (the coordinator's invariant 5 applies).
    void Progress(uint64_t generation, double progress, std::optional<double> total,
                  std::string message) const;
    // The tool's log message for the client, dropped once the call has settled; on the
    // call's exchange, at its request's level (a modern one's own, a legacy peer's).
    void Log(uint64_t generation, std::string tool, LoggingLevel level, std::string message) const;
    // A retry starts `delay` from now: the call's idle clock restarts then.
    void RetryScheduled(uint64_t generation, Duration delay) const;
    // The worker returned `result` (`threw`: the tool raised; `stopped`: it stopped at a
    // checkpoint after a cancel). `task_id` names the task whose work it was, or is empty
    // (then the TaskManager is asked: the call may have become a task while it ran).
    void Returned(uint64_t generation, std::string task_id, Json result, bool threw,
                  bool stopped) const;
    // A task's work (or a call that may have become one) was settled while queued: its job
    // never ran the tool.
    void NeverStarted(uint64_t generation, std::string task_id) const;
    // A legacy call's questions for the client (ClientRequests::Ask, on the call's exchange,
    // answered by its peer), answered into `box`;
    // its idle clock is paused while keel waits for the client. AskEnded: the worker stopped
    // waiting (answered or not): the questions are forgotten, the idle clock runs again.
    void AskClient(uint64_t generation, Json requests, std::shared_ptr<ClientAnswers> box) const;
    void AskEnded(uint64_t generation, std::shared_ptr<ClientAnswers> box) const;
    // The tool asked to become a task now (ToolContext::BecomeTask); `params` is the call's
    // {name, arguments, _meta?}, what the task stores as its request.
    void BecomeTask(uint64_t generation, Json params) const;

   private:
    template <typename Fn>
    void Post(Fn fn) const;

    EventLoop* loop_;
    std::weak_ptr<CallInbox> inbox_;
  };

 private:
  EventLoop& loop_;
  RequestCoordinator& coordinator_;
  ClientLog& log_;
  TaskManager* tasks_;
  ClientRequests* client_;
  PromoteFn promote_;
};

}  // namespace keel
