// CallRunner (call_runner.h): the worker side of a call, run inline here (the test is the
// worker), with a thread-safe hand-moved clock for the workers and a FakeClock for the loop.
#include "server/call/call_runner.h"

#include <atomic>
#include <memory>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "server/tools/fn_tool.h"

namespace keel::call_runner_test {
namespace {

// Time for workers: moved by hand, safe to read from any thread.
class WorkerClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(Duration(ticks_.load())); }
  void Advance(Duration d) { ticks_ += d.count(); }

 private:
  // Starts at the real steady time: the retry executor's backoff waits on a condition
  // variable until a deadline taken from this clock, so a start hours ahead (as this was)
  // made the breaker test wait until the machine had been up that long.
  std::atomic<Duration::rep> ticks_{std::chrono::steady_clock::now().time_since_epoch().count()};
};

struct Seen {
  TimePoint deadline;
  Millis remaining{-1};
  CallIdentity identity;
  int attempt = 0;
  std::string attempt_id;
};

struct Fixture {
  Fixture() {
    ToolSpec spec;
    spec.name = "probe";
    spec.description = "test";
    spec.input_schema = Json{{"type", "object"}};
    tool = std::make_unique<FnTool>(std::move(spec), [this](ToolContext& ctx) {
      seen.deadline = ctx.deadline();
      seen.remaining = ctx.remaining();
      seen.identity = ctx.identity();
      seen.attempt = ctx.attempt();
      seen.attempt_id = ctx.attempt_id();
      return TextResult("ok");
    });
  }

  // An admitted call of the probe, as the Session hands it to the pool.
  CallRunner::Work Admit(const Json& id) {
    CallIdentity identity;
    identity.tool_name = "probe";
    identity.tool = tool.get();
    identity.idempotency_key = "key-1";
    identity.request_id = id;
    RequestCoordinator::Admitted admitted =
        coordinator.Begin(std::move(identity), Json(), CallLimits{Millis(0), Millis(55000)});
    CallRunner::Work work;
    work.generation = admitted.generation;
    work.control = std::move(admitted.control);
    work.identity = std::move(admitted.identity);
    work.max = Millis(55000);
    work.arguments = Json::object();
    return work;
  }

  FakeClock loop_clock;
  EventLoop loop{loop_clock};
  RecordingSink sink;
  RequestCoordinator coordinator{sink, loop_clock, RequestCoordinator::Options()};
  ClientLog log{sink, loop_clock};
  WorkerClock worker_clock;
  std::shared_ptr<CallInbox> inbox = std::make_shared<CallInbox>(loop, coordinator, log, nullptr);
  std::shared_ptr<CallRunner> runner = std::make_shared<CallRunner>(
      CallRunner::Options{nullptr, nullptr, &worker_clock}, CallInbox::Port(loop, inbox));
  std::unique_ptr<Tool> tool;
  Seen seen;
};

}  // namespace

TEST_CASE(
    "the worker side reads the clock it is handed: a call's deadlines and remaining time "
    "are on it",
    "[call][runner]") {
  Fixture f;
  WorkerPool::Job job = f.runner->Job(f.Admit(Json(0)));
  const TimePoint handed_over = f.worker_clock.Now();
  f.worker_clock.Advance(Millis(4000));  // queued 4 s before a worker picks it up
  job();
  // The attempt's deadline: min(call deadline, attempt start + attempt_ms), all on the clock.
  CHECK(f.seen.deadline == handed_over + Millis(4000) + Millis(10000));
  CHECK(f.seen.remaining == Millis(10000));
  f.loop.RunPosted();
  REQUIRE(f.sink.ForId(0).size() == 1);
  CHECK(f.sink.ForId(0)[0]["result"]["content"][0]["text"] == "ok");
}

TEST_CASE(
    "the tool reads the identity admission computed, with the coordinator's correlation "
    "id and its attempt",
    "[call][runner]") {
  Fixture f;
  f.runner->Job(f.Admit(Json("r-1")))();
  CHECK(f.seen.identity.idempotency_key == "key-1");
  CHECK(f.seen.identity.tool == f.tool.get());
  CHECK(f.seen.identity.request_id == Json("r-1"));
  CHECK(f.seen.identity.correlation_id == "k-1");  // the coordinator's first generation
  CHECK(f.seen.attempt == 1);
  CHECK(f.seen.attempt_id == "k-1/1");
}

TEST_CASE("a job whose inbox is gone (its session ended) reports nothing and touches nothing",
          "[call][runner]") {
  Fixture f;
  WorkerPool::Job job = f.runner->Job(f.Admit(Json(7)));
  f.inbox.reset();  // the Session, owner of the inbox, is gone
  job();
  f.loop.RunPosted();  // the posted return finds no inbox
  CHECK(f.sink.ForId(7).empty());
  CHECK(f.coordinator.StateOf(Json(7)) == CallState::kRunning);
}

namespace {

// Replaces the probe with a tool that ends every call with a backend-looking failure (what a
// killed command or a cancelled upstream call answers), after the client withdrew it when
// `withdraw` is set. Runs `calls` calls, then one more: the answer it returns.
Json AnswerAfterFailures(Fixture& f, int calls, bool withdraw) {
  ToolSpec spec;
  spec.name = "probe";
  spec.description = "test";
  spec.input_schema = Json{{"type", "object"}};
  Json current_id;
  bool fail = true;
  f.tool = std::make_unique<FnTool>(std::move(spec), [&](ToolContext&) {
    if (!fail) return TextResult("ran");
    if (withdraw) REQUIRE(f.coordinator.Cancel(current_id));
    return ErrorResult("stopped; it may have taken effect.",
                       Json{{"type", "command_cancelled"}, {"failure_class", "ambiguous"}});
  });
  for (int i = 0; i < calls; ++i) {
    current_id = Json(i);
    f.runner->Job(f.Admit(current_id))();
    f.loop.RunPosted();
  }
  fail = false;
  current_id = Json(calls);
  f.runner->Job(f.Admit(current_id))();
  f.loop.RunPosted();
  const std::vector<Json> answers = f.sink.ForId(calls);
  REQUIRE(answers.size() == 1);
  return answers[0];
}

}  // namespace

TEST_CASE(
    "calls the client cancels never open the breaker however the tool stops: the next call "
    "runs",
    "[call][runner][breaker]") {
  Fixture f;
  const Json answer = AnswerAfterFailures(f, 40, /*withdraw=*/true);
  CHECK(answer["result"]["content"][0]["text"] == "ran");
  CHECK(f.sink.ForId(0).empty());  // a cancelled call is never answered
}

TEST_CASE(
    "the same failures without a cancel open the breaker: the next call is rejected without "
    "running",
    "[call][runner][breaker]") {
  Fixture f;
  const Json answer = AnswerAfterFailures(f, 40, /*withdraw=*/false);
  CHECK(answer["result"]["isError"] == true);
  CHECK(answer["result"]["content"][0]["text"] != "ran");
}

}  // namespace keel::call_runner_test
