// UpstreamClient (WRAP-1, WRAP-3, WRAP-4): keel as the MCP client of the server it wraps,
// over a FakeUpstreamTransport. Ids, late and duplicate answers dropped, cancels sent
// upstream, progress routed by token, the upstream's own requests answered or routed to the
// one call they can belong to, the connection's end, and the 2026-07-28 envelope.
#include "server/upstream/upstream_client.h"

#include <atomic>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/blocked_thread.h"
#include "fakes/fake_upstream_transport.h"
#include "protocol/error_codes.h"
#include "server/runtime/deadline_timer.h"
#include "server/runtime/worker_pool.h"

namespace keel::upstream_client_test {
namespace {

using Event = UpstreamRequest::Event;
using namespace std::chrono_literals;

TimePoint Now() { return std::chrono::steady_clock::now(); }

// What a request has by now, without waiting (a past deadline: kDeadline means nothing).
Event Poll(UpstreamRequest& request) { return request.Wait(CancellationToken(), TimePoint::min()); }

// A progress callback that records every value it is given.
UpstreamClient::StartOptions Recording(std::vector<double>* values, bool accepts_asks = false) {
  UpstreamClient::StartOptions options;
  options.accepts_asks = accepts_asks;
  options.progress = [values](double progress, std::optional<double>, const std::string&) {
    values->push_back(progress);
  };
  return options;
}

UpstreamClient::StartOptions Asking() {
  UpstreamClient::StartOptions options;
  options.accepts_asks = true;
  return options;
}

}  // namespace

TEST_CASE("each request keel starts gets an id larger than the one before", "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto first = fake.client->Start("tools/list", Json::object());
  auto second = fake.client->Start("tools/call", Json{{"name", "a"}});
  auto third = fake.client->Start("ping", Json());
  CHECK(first->id().get<int64_t>() < second->id().get<int64_t>());
  CHECK(second->id().get<int64_t>() < third->id().get<int64_t>());
  const std::vector<Json> sent = fake.wire->sent();
  REQUIRE(sent.size() == 3);
  CHECK(sent[1] == Json{{"jsonrpc", "2.0"},
                        {"id", second->id()},
                        {"method", "tools/call"},
                        {"params", {{"name", "a"}}}});
  CHECK(sent[2]["params"] == Json::object());  // null params go out as {}
}

TEST_CASE("a response completes its request, and a second response for the same id is dropped",
          "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto request = fake.client->Start("tools/call", Json::object());
  auto other = fake.client->Start("tools/call", Json::object());
  fake.wire->Inject(ResultFromUpstream(request->id(), Json{{"n", 1}}));
  REQUIRE(Poll(*request) == Event::kAnswered);
  CHECK(request->answer() == Json{{"n", 1}});
  CHECK_FALSE(request->is_error());
  CHECK(Poll(*other) == Event::kDeadline);

  fake.wire->Inject(ResultFromUpstream(request->id(), Json{{"n", 2}}));
  fake.wire->Inject(ErrorFromUpstream(request->id(), kInternalError, "again"));
  CHECK(request->answer() == Json{{"n", 1}});
  CHECK_FALSE(request->is_error());
  CHECK(Poll(*other) == Event::kDeadline);  // another id's request is not touched
}

TEST_CASE("an error response completes its request as an error", "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto request = fake.client->Start("tools/call", Json::object());
  fake.wire->Inject(ErrorFromUpstream(request->id(), kInvalidParams, "bad"));
  REQUIRE(Poll(*request) == Event::kAnswered);
  CHECK(request->is_error());
  CHECK(request->answer()["code"] == kInvalidParams);
}

TEST_CASE(
    "Cancel sends notifications/cancelled with the request's id, and a later answer is dropped",
    "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto request = fake.client->Start("tools/call", Json::object());
  fake.client->Cancel(request, "the client cancelled");
  const Json cancelled = fake.wire->last_sent();
  CHECK(cancelled["method"] == "notifications/cancelled");
  CHECK_FALSE(cancelled.contains("id"));
  CHECK(cancelled["params"]["requestId"] == request->id());
  CHECK(cancelled["params"]["reason"] == "the client cancelled");
  CHECK(fake.wire->abandoned() == std::vector<Json>{request->id()});

  fake.wire->Inject(ResultFromUpstream(request->id(), Json{{"late", true}}));
  CHECK(Poll(*request) == Event::kDeadline);  // no event: the late answer went nowhere
  CHECK(request->answer().is_null());
}

TEST_CASE("Cancel of a request already answered sends nothing upstream", "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto request = fake.client->Start("tools/call", Json::object());
  fake.wire->Inject(ResultFromUpstream(request->id(), Json::object()));
  fake.client->Cancel(request, "too late");
  CHECK(fake.wire->sent().size() == 1);  // the request only
  CHECK(fake.wire->abandoned().empty());
  CHECK(Poll(*request) == Event::kAnswered);
}

TEST_CASE("upstream progress reaches only the request whose keel-<id> token it names",
          "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  std::vector<double> first_values;
  std::vector<double> second_values;
  auto first = fake.client->Start("tools/call", Json::object(), Recording(&first_values));
  auto second = fake.client->Start("tools/call", Json::object(), Recording(&second_values));
  auto silent = fake.client->Start("tools/call", Json::object());
  const std::string second_token = "keel-" + std::to_string(second->id().get<int64_t>());
  const std::vector<Json> sent = fake.wire->sent();
  CHECK(sent[1]["params"]["_meta"]["progressToken"] == second_token);
  CHECK_FALSE(sent[2]["params"].contains("_meta"));  // no progress wanted: no token

  auto progress = [](const Json& token, const Json& value) {
    return NotificationFromUpstream("notifications/progress",
                                    Json{{"progressToken", token}, {"progress", value}});
  };
  fake.wire->Inject(progress(second_token, 1));
  fake.wire->Inject(progress("keel-999", 2));      // nobody's
  fake.wire->Inject(progress(second->id(), 3));    // the id is not the token
  fake.wire->Inject(progress(second_token, "x"));  // not a number
  CHECK(first_values.empty());
  CHECK(second_values == std::vector<double>{1});

  fake.wire->Inject(ResultFromUpstream(second->id(), Json::object()));
  fake.wire->Inject(progress(second_token, 4));  // after the answer: dropped
  CHECK(second_values == std::vector<double>{1});
}

TEST_CASE("a question from the upstream goes to the only request in flight that accepts asks",
          "[upstream][WRAP-4]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto plain = fake.client->Start("tools/list", Json::object());
  auto asking = fake.client->Start("tools/call", Json::object(), Asking());
  const Json params = {{"message", "Your name?"}, {"requestedSchema", {{"type", "object"}}}};
  fake.wire->Inject(AskFromUpstream("e1", "elicitation/create", params));

  REQUIRE(Poll(*asking) == Event::kAsked);
  const std::optional<Json> ask = asking->TakeAsk();
  REQUIRE(ask.has_value());
  CHECK(*ask == Json{{"id", "e1"}, {"method", "elicitation/create"}, {"params", params}});
  CHECK_FALSE(asking->TakeAsk().has_value());  // each is taken once
  CHECK(Poll(*plain) == Event::kDeadline);
  CHECK(fake.wire->sent().size() == 2);  // keel answered nothing itself
}

TEST_CASE(
    "a question from the upstream is refused with an error when two requests that accept asks are "
    "in flight",
    "[upstream][WRAP-4]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto first = fake.client->Start("tools/call", Json::object(), Asking());
  auto second = fake.client->Start("tools/call", Json::object(), Asking());
  fake.wire->Inject(AskFromUpstream(7, "sampling/createMessage"));
  const Json answer = fake.wire->last_sent();
  CHECK(answer["id"] == 7);
  CHECK(answer["error"]["code"] == kInternalError);
  CHECK_FALSE(answer.contains("result"));
  CHECK(Poll(*first) == Event::kDeadline);
  CHECK(Poll(*second) == Event::kDeadline);
}

TEST_CASE(
    "a question from the upstream with no call in flight is refused, and roots/list is answered "
    "with no roots",
    "[upstream][WRAP-4]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto plain = fake.client->Start("tools/list", Json::object());  // accepts no asks
  fake.wire->Inject(AskFromUpstream("e", "elicitation/create"));
  CHECK(fake.wire->last_sent()["error"]["code"] == kInternalError);
  fake.wire->Inject(AskFromUpstream("r", "roots/list"));
  CHECK(fake.wire->last_sent() == ResultFromUpstream("r", Json{{"roots", Json::array()}}));
  CHECK(Poll(*plain) == Event::kDeadline);
}

TEST_CASE(
    "a ping from the upstream is answered at once, and a method keel does not serve gets -32601",
    "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto asking = fake.client->Start("tools/call", Json::object(), Asking());
  fake.wire->Inject(AskFromUpstream(1, "ping"));
  CHECK(fake.wire->last_sent() == ResultFromUpstream(1, Json::object()));
  fake.wire->Inject(AskFromUpstream(2, "tools/call"));
  const Json refused = fake.wire->last_sent();
  CHECK(refused["id"] == 2);
  CHECK(refused["error"]["code"] == kMethodNotFound);
  CHECK(Poll(*asking) == Event::kDeadline);  // neither reached the call
}

TEST_CASE("the upstream's log message goes to the call it belongs to, else to on_notification",
          "[upstream][WRAP-1]") {
  std::vector<std::string> unplaced;
  UpstreamClient::Handlers handlers;
  handlers.on_notification = [&](const std::string& method, const Json&) {
    unplaced.push_back(method);
  };
  FakeUpstream fake = MakeFakeUpstream(std::move(handlers));
  const Json log = NotificationFromUpstream("notifications/message",
                                            Json{{"level", "warning"}, {"data", "disk"}});
  fake.wire->Inject(log);  // no call in flight
  CHECK(unplaced == std::vector<std::string>{"notifications/message"});

  std::vector<std::string> logged;
  UpstreamClient::StartOptions options = Asking();
  options.log = [&](LoggingLevel level, const std::string& text) {
    CHECK(level == LoggingLevel::kWarning);
    logged.push_back(text);
  };
  auto call = fake.client->Start("tools/call", Json::object(), options);
  fake.wire->Inject(log);
  fake.wire->Inject(NotificationFromUpstream("notifications/tools/list_changed", Json::object()));
  CHECK(logged == std::vector<std::string>{"disk"});
  CHECK(unplaced ==
        std::vector<std::string>{"notifications/message", "notifications/tools/list_changed"});
}

TEST_CASE("the connection closing makes every request in flight lost, with the reason",
          "[upstream][WRAP-3]") {
  std::vector<std::string> closed;
  UpstreamClient::Handlers handlers;
  handlers.on_closed = [&](const std::string& why) { closed.push_back(why); };
  FakeUpstream fake = MakeFakeUpstream(std::move(handlers));
  auto answered = fake.client->Start("tools/call", Json::object());
  auto first = fake.client->Start("tools/call", Json::object());
  auto second = fake.client->Start("tools/call", Json::object(), Asking());
  fake.wire->Inject(ResultFromUpstream(answered->id(), Json::object()));

  fake.wire->Close("exited with status 3");
  for (const auto& request : {first, second}) {
    REQUIRE(Poll(*request) == Event::kLost);
    CHECK(request->lost_reason() == "exited with status 3");
    CHECK(request->sent());  // it reached the upstream: it may have run
  }
  CHECK(Poll(*answered) == Event::kAnswered);
  CHECK(fake.client->closed());
  CHECK(closed == std::vector<std::string>{"exited with status 3"});
}

TEST_CASE("a request started after the connection closed is lost at once and never sent",
          "[upstream][WRAP-3]") {
  FakeUpstream fake = MakeFakeUpstream();
  fake.wire->Close("exited with status 0");
  std::vector<double> values;
  auto request = fake.client->Start("tools/call", Json::object(), Recording(&values));
  REQUIRE(Poll(*request) == Event::kLost);
  CHECK_FALSE(request->sent());
  CHECK_FALSE(request->lost_reason().empty());
  CHECK(fake.wire->sent().empty());
}

TEST_CASE("a request the transport refuses is lost at once with the transport's reason, never sent",
          "[upstream][WRAP-3]") {
  FakeUpstream fake = MakeFakeUpstream();
  fake.wire->Refuse("the upstream is not reading its input");
  std::vector<double> values;
  auto request = fake.client->Start("tools/call", Json::object(), Recording(&values, true));
  REQUIRE(Poll(*request) == Event::kLost);
  CHECK_FALSE(request->sent());
  CHECK(request->lost_reason() == "the upstream is not reading its input");
  // Forgotten: its answer and its progress go nowhere, and no question is routed to it.
  fake.wire->Refuse("");
  const std::string token = "keel-" + std::to_string(request->id().get<int64_t>());
  fake.wire->Inject(NotificationFromUpstream("notifications/progress",
                                             Json{{"progressToken", token}, {"progress", 1}}));
  fake.wire->Inject(AskFromUpstream("e", "elicitation/create"));
  CHECK(values.empty());
  CHECK(fake.wire->last_sent()["error"]["code"] == kInternalError);
}

TEST_CASE("a 2026-07-28 envelope is merged into every request's params._meta",
          "[upstream][WRAP-4]") {
  FakeUpstream fake = MakeFakeUpstream();
  const Json envelope = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                         {"io.modelcontextprotocol/clientInfo", {{"name", "keel"}}}};
  fake.client->set_envelope(envelope);
  std::vector<double> values;
  fake.client->Start("tools/call", Json{{"name", "t"}, {"_meta", {{"client", "kept"}}}},
                     Recording(&values));
  fake.client->Start("tools/list", Json());
  fake.client->Notify("notifications/cancelled", Json{{"requestId", 1}});
  const std::vector<Json> sent = fake.wire->sent();
  REQUIRE(sent.size() == 3);
  Json expected = envelope;
  expected["client"] = "kept";
  expected["progressToken"] = "keel-" + std::to_string(sent[0]["id"].get<int64_t>());
  CHECK(sent[0]["params"]["_meta"] == expected);
  CHECK(sent[1]["params"]["_meta"] == envelope);
  CHECK(sent[2]["params"]["_meta"] == envelope);
}

TEST_CASE(
    "Request returns the answer, a JSON-RPC error as {error}, and the reason when the connection "
    "ends",
    "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  std::thread upstream([&] {
    // Plays the upstream, one request at a time as Request sends them: the first is refused,
    // the second answered, and the connection ends once the third was sent.
    const TimePoint give_up = Now() + 10s;  // only if Request never sends
    for (size_t seen = 0; seen < 3 && Now() < give_up;) {
      const std::vector<Json> all = fake.wire->sent();
      if (all.size() == seen) {
        std::this_thread::yield();
        continue;
      }
      const Json& request = all[seen++];
      if (seen == 1) fake.wire->Inject(ErrorFromUpstream(request["id"], kMethodNotFound, "no"));
      if (seen == 2) fake.wire->Inject(ResultFromUpstream(request["id"], Json{{"ok", true}}));
      if (seen == 3) fake.wire->Close("exited with status 9");
    }
  });
  const CancellationToken never;
  std::string why;
  const auto refused = fake.client->Request("server/discover", Json(), Now() + 10s, never, &why);
  const auto answered = fake.client->Request("initialize", Json(), Now() + 10s, never, &why);
  const auto lost = fake.client->Request("tools/list", Json(), Now() + 10s, never, &why);
  upstream.join();
  REQUIRE(refused.has_value());
  CHECK((*refused)["error"]["code"] == kMethodNotFound);
  REQUIRE(answered.has_value());
  CHECK(*answered == Json{{"ok", true}});
  CHECK_FALSE(lost.has_value());
  CHECK(why == "exited with status 9");
}

TEST_CASE("Request with no answer by its deadline cancels the request upstream",
          "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  std::string why;
  CHECK_FALSE(
      fake.client->Request("initialize", Json(), Now(), CancellationToken(), &why).has_value());
  CHECK(why == "no answer to initialize in time");
  const std::vector<Json> sent = fake.wire->sent();
  REQUIRE(sent.size() == 2);
  CHECK(sent[1]["method"] == "notifications/cancelled");
  CHECK(sent[1]["params"]["requestId"] == sent[0]["id"]);
}

TEST_CASE("Request stopped from another thread while it waits ends at once and cancels upstream",
          "[upstream][WRAP-3]") {
  FakeUpstream fake = MakeFakeUpstream();
  CancellationToken stop;
  std::latch waiter_known(1);
  pid_t waiter = 0;
  bool asleep = false;
  std::thread shutdown([&] {
    waiter_known.wait();
    asleep = WaitUntilAsleep(waiter);  // the stop lands while Request waits, not before
    stop.Cancel();
  });
  waiter = CurrentThreadId();
  waiter_known.count_down();
  std::string why;
  const std::optional<Json> answer =
      fake.client->Request("initialize", Json(), Now() + 10s, stop, &why);
  shutdown.join();
  CHECK(asleep);
  CHECK_FALSE(answer.has_value());
  CHECK(why == "keel is shutting down");
  const std::vector<Json> sent = fake.wire->sent();
  REQUIRE(sent.size() == 2);
  CHECK(sent[1]["method"] == "notifications/cancelled");
  CHECK(sent[1]["params"]["requestId"] == sent[0]["id"]);
}

TEST_CASE(
    "Wait returns kCancelled promptly when the token is cancelled from another thread while it "
    "waits",
    "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto request = fake.client->Start("tools/call", Json::object());
  CancellationToken token;
  std::latch waiter_known(1);
  pid_t waiter = 0;
  bool asleep = false;
  TimePoint cancelled_at;
  std::thread canceller([&] {
    waiter_known.wait();
    asleep = WaitUntilAsleep(waiter);  // the cancel lands while Wait blocks, not before
    cancelled_at = Now();
    token.Cancel();
  });
  waiter = CurrentThreadId();
  waiter_known.count_down();
  const Event event = request->Wait(token, Now() + 10s);
  const TimePoint returned_at = Now();
  canceller.join();
  CHECK(asleep);
  CHECK(event == Event::kCancelled);
  CHECK(returned_at - cancelled_at < 1s);
  // Waiting again returns at once; the request is still in flight, for the caller to cancel.
  CHECK(request->Wait(token, TimePoint::max()) == Event::kCancelled);
  fake.client->Cancel(request, "cancelled");
  CHECK(fake.wire->last_sent()["params"]["requestId"] == request->id());
}

TEST_CASE("Wait returns kAnswered when the answer arrives from another thread while it waits",
          "[upstream][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  auto request = fake.client->Start("tools/call", Json::object());
  std::latch waiter_known(1);
  pid_t waiter = 0;
  bool asleep = false;
  std::thread upstream([&] {
    waiter_known.wait();
    asleep = WaitUntilAsleep(waiter);  // the answer lands while Wait blocks, not before
    fake.wire->Inject(ResultFromUpstream(request->id(), Json{{"done", true}}));
  });
  waiter = CurrentThreadId();
  waiter_known.count_down();
  const Event event = request->Wait(CancellationToken(), TimePoint::max());
  upstream.join();
  CHECK(asleep);
  CHECK(event == Event::kAnswered);
  CHECK(request->answer() == Json{{"done", true}});
}

// In a pool job, Wait suspends the job instead of blocking its worker (suspend.h), and the
// answer, the cancel, the deadline or the connection's end resumes it, once.
namespace {

// Spins (yielding, no sleep) until `pool` has `n` suspended jobs; false after 30 s.
bool UntilSuspended(const WorkerPool& pool, size_t n = 1) {
  const TimePoint limit = Now() + 30s;
  while (pool.suspended() < n) {
    if (Now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

// Waits on `request` in a job of `pool`; the event lands in `*event` (-1 until then).
void WaitInPool(WorkerPool& pool, std::shared_ptr<UpstreamRequest> request, CancellationToken token,
                TimePoint deadline, std::atomic<int>* event) {
  pool.Submit([request, token, deadline, event] {
    *event = static_cast<int>(request->Wait(token, deadline));
  });
}

}  // namespace

TEST_CASE("a request waited on in a pool job suspends the job, and the answer resumes it",
          "[upstream][fiber][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  WorkerPool pool(1);
  const size_t timers = DeadlineTimer::Shared().armed();
  auto request = fake.client->Start("tools/call", Json::object());
  std::atomic<int> event{-1};
  WaitInPool(pool, request, CancellationToken(), Now() + 600s, &event);
  REQUIRE(UntilSuspended(pool));
  CHECK(DeadlineTimer::Shared().armed() == timers + 1);
  CHECK(event.load() == -1);
  fake.wire->Inject(ResultFromUpstream(request->id(), Json{{"n", 1}}));
  REQUIRE(pool.WaitIdle(Now() + 30s));
  CHECK(event.load() == static_cast<int>(Event::kAnswered));
  CHECK(request->answer() == Json{{"n", 1}});
  CHECK(DeadlineTimer::Shared().armed() == timers);  // the deadline's timer is disarmed
}

TEST_CASE("a suspended wait is resumed by the cancel", "[upstream][fiber][CAN-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  WorkerPool pool(1);
  auto request = fake.client->Start("tools/call", Json::object());
  CancellationToken token;
  std::atomic<int> event{-1};
  WaitInPool(pool, request, token, TimePoint::max(), &event);
  REQUIRE(UntilSuspended(pool));
  token.Cancel();
  REQUIRE(pool.WaitIdle(Now() + 30s));
  CHECK(event.load() == static_cast<int>(Event::kCancelled));
}

TEST_CASE("a suspended wait is resumed at its deadline", "[upstream][fiber][TMO-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  WorkerPool pool(1);
  auto request = fake.client->Start("tools/call", Json::object());
  std::atomic<int> event{-1};
  const TimePoint deadline = Now() + 20ms;
  WaitInPool(pool, request, CancellationToken(), deadline, &event);
  REQUIRE(pool.WaitIdle(Now() + 30s));
  CHECK(event.load() == static_cast<int>(Event::kDeadline));
  CHECK(Now() >= deadline);
}

TEST_CASE("a suspended wait is resumed by the connection's end", "[upstream][fiber][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  WorkerPool pool(1);
  auto request = fake.client->Start("tools/call", Json::object());
  std::atomic<int> event{-1};
  WaitInPool(pool, request, CancellationToken(), TimePoint::max(), &event);
  REQUIRE(UntilSuspended(pool));
  fake.wire->Close("the upstream exited");
  REQUIRE(pool.WaitIdle(Now() + 30s));
  CHECK(event.load() == static_cast<int>(Event::kLost));
  CHECK(request->lost_reason() == "the upstream exited");
}

TEST_CASE("a suspended wait is resumed by a question from the upstream",
          "[upstream][fiber][WRAP-3]") {
  FakeUpstream fake = MakeFakeUpstream();
  WorkerPool pool(1);
  auto request = fake.client->Start("tools/call", Json::object(), Asking());
  std::atomic<int> event{-1};
  WaitInPool(pool, request, CancellationToken(), TimePoint::max(), &event);
  REQUIRE(UntilSuspended(pool));
  fake.wire->Inject(Json{{"jsonrpc", "2.0"},
                         {"id", 7},
                         {"method", "elicitation/create"},
                         {"params", {{"message", "sure?"}}}});
  REQUIRE(pool.WaitIdle(Now() + 30s));
  CHECK(event.load() == static_cast<int>(Event::kAsked));
}

TEST_CASE("answers and cancels racing the suspension each resume the wait exactly once",
          "[upstream][fiber][WRAP-1]") {
  FakeUpstream fake = MakeFakeUpstream();
  WorkerPool pool(4);
  constexpr int kCalls = 300;
  std::vector<std::atomic<int>> events(kCalls);
  for (auto& event : events) event = -1;
  std::vector<std::shared_ptr<UpstreamRequest>> requests;
  std::vector<CancellationToken> tokens(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    requests.push_back(fake.client->Start("tools/call", Json::object()));
    WaitInPool(pool, requests[i], tokens[i], Now() + 600s, &events[i]);
    // No wait for the suspension: the answer or the cancel races the job's way into it.
    if (i % 2 == 0) {
      fake.wire->Inject(ResultFromUpstream(requests[i]->id(), Json{{"i", i}}));
    } else {
      tokens[i].Cancel();
    }
  }
  REQUIRE(pool.WaitIdle(Now() + 60s));
  for (int i = 0; i < kCalls; ++i) {
    CHECK(events[i].load() == static_cast<int>(i % 2 == 0 ? Event::kAnswered : Event::kCancelled));
  }
  CHECK(pool.suspended() == 0);
}

}  // namespace keel::upstream_client_test
