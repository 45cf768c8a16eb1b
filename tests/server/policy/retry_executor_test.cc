// Retry executor (RET-1, RET-2, BUD-2, OPS-1): one call's attempts driven by a fake clock
// (moved only by the fake wait), a fixed RNG and scripted attempt results. No sleeps.
// Defaults: max_attempts 3, base 250 ms, cap 1500 ms, min useful attempt 200 ms, attempt
// 10 s, call budget 55 s; the RNG always gives 0.5, so retry 1 waits 125 ms, retry 2 250 ms.
#include "server/policy/retry_executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "server/policy/backoff.h"

namespace keel::retry_executor_test {
namespace {

using Json = nlohmann::json;
using Kind = RetryEvent::Kind;
using R = RetryReason;

constexpr uint64_t kHalf = uint64_t{1} << 63;  // UnitSample(kHalf) == 0.5

Json Ok(int n) {
  Json result = Json{{"content", Json::array({Json{{"type", "text"}, {"text", "ok"}}})}};
  result["structuredContent"] = Json{{"attempt", n}};
  return result;
}

Json Fail(const std::string& type, std::optional<int64_t> retry_after_ms = std::nullopt) {
  Json error = Json{{"type", type}};
  if (retry_after_ms) error["retry_after_ms"] = *retry_after_ms;
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", "failed: " + type}}})},
              {"isError", true},
              {"structuredContent", Json{{"error", error}}}};
}

// A call and its fakes: attempt n returns script[n-1], or success past the script's end.
struct Harness {
  const TimePoint t0 = TimePoint() + std::chrono::hours(1);
  TimePoint now = t0;
  int random_calls = 0;
  bool cancel_in_wait = false;  // the fake wait reports cancellation
  bool cancelled = false;       // what deps.cancelled() says
  RetryBudgetPool own_pool;
  RetryBudgetPool* pool = &own_pool;
  std::vector<Json> script;
  std::vector<AttemptInfo> attempts;
  std::vector<TimePoint> waits;
  std::vector<RetryEvent> events;
  RetryCall call;

  Harness() {
    call.intent_id = "intent-7";
    call.backend = "backend-a";
    call.call_deadline = t0 + Millis(call.policy.timeouts.max_ms);
  }

  RetryExecutor::Deps Deps() {
    return RetryExecutor::Deps{.now = [this] { return now; },
                               .random =
                                   [this] {
                                     ++random_calls;
                                     return kHalf;
                                   },
                               .wait =
                                   [this](TimePoint until) {
                                     waits.push_back(until);
                                     if (cancel_in_wait) return true;
                                     now = std::max(now, until);
                                     return false;
                                   },
                               .cancelled = [this] { return cancelled; },
                               .budgets = pool};
  }

  RetryOutcome Run() {
    return RetryExecutor::Run(
        call, Deps(),
        [this](const AttemptInfo& info) {
          attempts.push_back(info);
          const size_t i = static_cast<size_t>(info.attempt) - 1;
          return i < script.size() ? script[i] : Ok(info.attempt);
        },
        [this](const RetryEvent& event) { events.push_back(event); });
  }
};

TEST_CASE("a call that succeeds at once makes one attempt and reports no retry event", "[retry]") {
  Harness h;
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 1);
  CHECK(out.result == Ok(1));
  CHECK_FALSE(out.cancelled);
  CHECK_FALSE(out.needs_reconciliation);
  CHECK_FALSE(out.last_decision.has_value());
  CHECK(h.events.empty());
  REQUIRE(h.attempts.size() == 1);
  CHECK(h.attempts[0].attempt_id == "intent-7/1");
  CHECK(h.random_calls == 0);
}

TEST_CASE("a transient failure is retried after the jittered delay under the same intent id",
          "[retry]") {
  Harness h;
  h.script = {Fail("backend_503")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 2);
  CHECK(out.result == Ok(2));
  REQUIRE(h.attempts.size() == 2);
  CHECK(h.attempts[0].attempt_id == "intent-7/1");
  CHECK(h.attempts[1].attempt_id == "intent-7/2");
  CHECK(h.attempts[1].attempt == 2);

  REQUIRE(h.events.size() == 1);
  const RetryEvent& e = h.events[0];
  CHECK(e.kind == Kind::kRetryScheduled);
  CHECK(e.attempt == 1);
  CHECK(e.failure.type == "backend_503");
  CHECK(e.failure.failure == FailureClass::kRejectedTransient);
  CHECK(e.decision.retry);
  CHECK(e.decision.delay_ms == JitterDelayMs(h.call.policy.retry, 1, 0.5));
  CHECK(e.decision.delay_ms == 125);
  CHECK(e.remaining_budget_ms == 55000);
  REQUIRE(h.waits.size() == 1);
  CHECK(h.waits[0] == h.t0 + Millis(125));
  CHECK(h.random_calls == 1);  // one sample per decision
  REQUIRE(out.last_decision.has_value());
  CHECK(out.last_decision->reason == R::kRetry);
}

TEST_CASE("an ambiguous failure of a read is retried", "[retry]") {
  Harness h;
  h.call.effect = EffectClass::kRead;
  h.script = {Fail("attempt_timeout")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 2);
  CHECK_FALSE(out.needs_reconciliation);
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].kind == Kind::kRetryScheduled);
  CHECK(h.events[0].failure.failure == FailureClass::kAmbiguous);
}

TEST_CASE("an ambiguous unsafe write is not retried and is annotated as needing reconciliation",
          "[retry]") {
  Harness h;
  h.call.effect = EffectClass::kUnsafeWrite;
  h.script = {Fail("lost_response")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 1);
  CHECK(out.needs_reconciliation);
  CHECK(out.result["isError"] == true);
  const Json& error = out.result["structuredContent"]["error"];
  CHECK(error["type"] == "lost_response");  // existing fields kept
  CHECK(error["needs_reconciliation"] == true);
  CHECK(error["effect"] == "unknown");
  REQUIRE(out.result["content"].size() == 2);
  CHECK(out.result["content"][0]["text"] == "failed: lost_response");
  const auto text = out.result["content"][1]["text"].get<std::string>();
  CHECK(text.find("may have happened") != std::string::npos);
  CHECK(text.find("ledger_lookup") != std::string::npos);

  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].kind == Kind::kRetrySuppressed);
  CHECK(h.events[0].decision.reason == R::kUnsafeWriteAmbiguous);
  CHECK(h.events[0].decision.needs_reconciliation);
}

TEST_CASE("the reconciliation note is added to a result that has no content blocks", "[retry]") {
  Harness h;
  h.call.effect = EffectClass::kUnsafeWrite;
  h.script = {Json{{"isError", true},
                   {"structuredContent",
                    Json{{"error", Json{{"type", "tool_x"}, {"failure_class", "ambiguous"}}}}}}};
  const RetryOutcome out = h.Run();
  REQUIRE(out.needs_reconciliation);
  CHECK(out.result["structuredContent"]["error"]["type"] == "tool_x");
  CHECK(out.result["structuredContent"]["error"]["effect"] == "unknown");
  REQUIRE(out.result["content"].is_array());
  CHECK(out.result["content"].size() == 1);
}

TEST_CASE("an ambiguous idempotent write is retried with a key and needs reconciliation without",
          "[retry]") {
  SECTION("keyed: retried") {
    Harness h;
    h.call.effect = EffectClass::kIdempotentWrite;
    h.call.has_idempotency_key = true;
    h.script = {Fail("attempt_timeout")};
    const RetryOutcome out = h.Run();
    CHECK(out.attempts == 2);
    CHECK_FALSE(out.needs_reconciliation);
    REQUIRE(h.events.size() == 1);
    CHECK(h.events[0].kind == Kind::kRetryScheduled);
  }
  SECTION("unkeyed: refused as unkeyed_write") {
    Harness h;
    h.call.effect = EffectClass::kIdempotentWrite;
    h.call.has_idempotency_key = false;
    h.script = {Fail("attempt_timeout")};
    const RetryOutcome out = h.Run();
    CHECK(out.attempts == 1);
    CHECK(out.needs_reconciliation);
    CHECK(out.result["structuredContent"]["error"]["needs_reconciliation"] == true);
    REQUIRE(h.events.size() == 1);
    CHECK(h.events[0].kind == Kind::kRetrySuppressed);
    CHECK(h.events[0].decision.reason == R::kUnkeyedWrite);
  }
}

TEST_CASE("a permanent failure makes one attempt and is suppressed as permanent_failure",
          "[retry]") {
  Harness h;
  h.script = {Fail("invalid_arguments")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 1);
  CHECK(out.result == Fail("invalid_arguments"));
  CHECK_FALSE(out.needs_reconciliation);
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].kind == Kind::kRetrySuppressed);
  CHECK(h.events[0].decision.reason == R::kPermanentFailure);
  CHECK(h.waits.empty());
}

TEST_CASE("a call that fails every attempt stops at max_attempts and returns the last result",
          "[retry]") {
  Harness h;
  h.script = {Fail("backend_503"), Fail("backend_429"), Fail("transport_unavailable")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 3);
  CHECK(out.result == Fail("transport_unavailable"));
  REQUIRE(h.events.size() == 3);
  CHECK(h.events[0].kind == Kind::kRetryScheduled);
  CHECK(h.events[1].kind == Kind::kRetryScheduled);
  CHECK(h.events[1].decision.delay_ms == 250);  // retry 2: 0.5 * 500
  CHECK(h.events[2].kind == Kind::kRetrySuppressed);
  CHECK(h.events[2].attempt == 3);
  CHECK(h.events[2].decision.reason == R::kMaxAttempts);
  REQUIRE(h.attempts.size() == 3);
  CHECK(h.attempts[2].attempt_id == "intent-7/3");
  REQUIRE(out.last_decision.has_value());
  CHECK(out.last_decision->reason == R::kMaxAttempts);
}

TEST_CASE("a policy of one attempt never retries and reports no retry event", "[retry]") {
  Harness h;
  h.call.policy.retry.max_attempts = 1;
  h.script = {Fail("backend_503")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 1);
  CHECK(h.events.empty());
  REQUIRE(out.last_decision.has_value());
  CHECK(out.last_decision->reason == R::kMaxAttempts);
}

TEST_CASE("no retry starts when the call's remaining budget cannot cover backoff and an attempt",
          "[retry]") {
  Harness h;
  h.call.call_deadline = h.t0 + Millis(300);  // 125 ms backoff + 200 ms useful > 300 ms
  h.script = {Fail("backend_503")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 1);
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].kind == Kind::kRetrySuppressed);
  CHECK(h.events[0].decision.reason == R::kBudgetExhausted);
  CHECK(h.events[0].remaining_budget_ms == 300);
}

TEST_CASE("the remaining budget is never negative once the call deadline has passed", "[retry]") {
  Harness h;
  h.call.call_deadline = h.t0 - Millis(5);
  h.script = {Fail("backend_503")};
  h.Run();
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].decision.reason == R::kBudgetExhausted);
  CHECK(h.events[0].remaining_budget_ms == 0);
}

TEST_CASE("an empty retry budget suppresses a later call's retry", "[retry]") {
  RetryBudgetPool pool;
  Harness first;
  first.pool = &pool;
  first.call.budget = RetryBudgetSettings{.ratio = 0, .burst = 1};
  first.script = {Fail("backend_503")};
  CHECK(first.Run().attempts == 2);  // takes the only token
  CHECK(pool.Tokens("backend-a") == 0);

  Harness second;
  second.pool = &pool;
  second.call.budget = first.call.budget;
  second.script = {Fail("backend_503")};
  const RetryOutcome out = second.Run();
  CHECK(out.attempts == 1);
  REQUIRE(second.events.size() == 1);
  CHECK(second.events[0].kind == Kind::kRetrySuppressed);
  CHECK(second.events[0].decision.reason == R::kRetryBudgetEmpty);
}

TEST_CASE("each call's first attempt deposits ratio in its backend's retry budget", "[retry]") {
  RetryBudgetPool pool;
  const RetryBudgetSettings settings{.ratio = 0.5, .burst = 1};
  auto call = [&](std::vector<Json> script) {
    Harness h;
    h.pool = &pool;
    h.call.budget = settings;
    h.script = std::move(script);
    return h.Run();
  };
  CHECK(call({Fail("backend_503")}).attempts == 2);  // full bucket (capped deposit), then 0
  CHECK(pool.Tokens("backend-a") == Approx(0.0));
  CHECK(call({}).attempts == 1);  // a success still deposits
  CHECK(pool.Tokens("backend-a") == Approx(0.5));
  CHECK(call({Fail("backend_503")}).attempts == 2);  // 0.5 + 0.5 = one token: retried
  CHECK(pool.Tokens("backend-a") == Approx(0.0));
  CHECK(pool.Tokens("backend-b") == 0);  // never used
}

TEST_CASE("a backend's retry-after hint sets the backoff, clamped to retry_after_cap_ms",
          "[retry]") {
  SECTION("within the cap") {
    Harness h;
    h.script = {Fail("backend_429", 3000)};
    CHECK(h.Run().attempts == 2);
    REQUIRE(h.events.size() == 1);
    CHECK(h.events[0].failure.retry_after_ms == std::optional<int64_t>(3000));
    CHECK(h.events[0].decision.delay_ms >= 3000);
    REQUIRE(h.waits.size() == 1);
    CHECK(h.waits[0] >= h.t0 + Millis(3000));
  }
  SECTION("above the cap") {
    Harness h;
    h.script = {Fail("backend_429", 60000)};
    CHECK(h.Run().attempts == 2);
    REQUIRE(h.events.size() == 1);
    CHECK(h.events[0].decision.delay_ms == h.call.policy.retry.retry_after_cap_ms);
  }
}

TEST_CASE("a cancellation during the backoff wait ends the call without another attempt",
          "[retry]") {
  Harness h;
  h.cancel_in_wait = true;
  h.script = {Fail("backend_503")};
  const RetryOutcome out = h.Run();
  CHECK(out.cancelled);
  CHECK(out.attempts == 1);
  CHECK(h.attempts.size() == 1);
  CHECK(out.result == Fail("backend_503"));
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].kind == Kind::kRetryScheduled);
}

TEST_CASE("a call already cancelled when a retry would start makes no further attempt", "[retry]") {
  Harness h;
  h.cancelled = true;  // the first attempt runs regardless (it was admitted)
  h.script = {Fail("backend_503")};
  const RetryOutcome out = h.Run();
  CHECK(out.cancelled);
  CHECK(out.attempts == 1);
  CHECK(h.attempts.size() == 1);
  CHECK(out.result == Fail("backend_503"));
}

TEST_CASE("shadow mode makes one attempt and records the retry it would have made", "[retry]") {
  RetryBudgetPool pool;
  Harness warm;  // one real retry first, so the bucket is below burst and a deposit shows
  warm.pool = &pool;
  warm.script = {Fail("backend_503")};
  REQUIRE(warm.Run().attempts == 2);
  REQUIRE(pool.Tokens("backend-a") == Approx(9.0));

  Harness h;
  h.pool = &pool;
  h.call.shadow = true;
  h.script = {Fail("backend_503")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 1);
  CHECK(out.result == Fail("backend_503"));
  CHECK(h.waits.empty());
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].kind == Kind::kWouldHave);
  CHECK(h.events[0].decision.retry);
  CHECK(h.events[0].decision.reason == R::kRetry);
  CHECK(h.events[0].decision.delay_ms == 125);
  CHECK(pool.Tokens("backend-a") == Approx(9.2));  // the deposit only; no token withdrawn
}

TEST_CASE("shadow mode still marks an ambiguous unsafe write as needing reconciliation",
          "[retry]") {
  Harness h;
  h.call.shadow = true;
  h.call.effect = EffectClass::kUnsafeWrite;
  h.script = {Fail("attempt_timeout")};
  const RetryOutcome out = h.Run();
  CHECK(out.attempts == 1);
  CHECK(out.needs_reconciliation);
  CHECK(out.result["structuredContent"]["error"]["effect"] == "unknown");
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].kind == Kind::kWouldHave);
  CHECK(h.events[0].decision.reason == R::kUnsafeWriteAmbiguous);
}

TEST_CASE(
    "an attempt's deadline is its start plus attempt_ms, or a moment after the call deadline "
    "when that comes first",
    "[retry]") {
  Harness h;
  h.call.policy.timeouts.attempt_ms = 1000;
  h.call.call_deadline = h.t0 + Millis(1100);
  h.script = {Fail("backend_503")};
  REQUIRE(h.Run().attempts == 2);
  REQUIRE(h.attempts.size() == 2);
  CHECK(h.attempts[0].started == h.t0);
  CHECK(h.attempts[0].deadline == h.t0 + Millis(1000));  // attempt_ms first
  // The retry starts at t0 + 125 ms; t0 + 1125 ms would pass the call deadline. The call's
  // own maximum timeout ends the call at t0 + 1100 ms (and cancels the attempt); the
  // attempt's deadline lies after it, so the attempt's own timer never answers first.
  CHECK(h.attempts[1].started == h.t0 + Millis(125));
  CHECK(h.attempts[1].deadline == h.t0 + Millis(1100) + kAfterCallDeadline);
  CHECK(h.attempts[1].deadline > h.call.call_deadline);
}

TEST_CASE("the retry budget pool replaces a bucket when its settings change", "[retry]") {
  RetryBudgetPool pool;
  const RetryBudgetSettings two{.ratio = 0, .burst = 2};
  const RetryInput input{.effect = EffectClass::kRead,
                         .failure = FailureClass::kRejectedTransient,
                         .attempt = 1,
                         .remaining_budget_ms = 60000,
                         .sample = 0.5};
  pool.RecordFirstAttempt("b", two);
  CHECK(pool.Tokens("b") == 2);
  REQUIRE(pool.DecideAndWithdraw("b", two, input).retry);
  CHECK(pool.Tokens("b") == 1);
  pool.RecordFirstAttempt("b", two);  // same settings: same bucket
  CHECK(pool.Tokens("b") == 1);
  CHECK(pool.DecideOnly("b", two, input).retry);  // withdraws nothing
  CHECK(pool.Tokens("b") == 1);

  const RetryBudgetSettings five{.ratio = 0, .burst = 5};
  pool.RecordFirstAttempt("b", five);  // a reload changed them: a full new bucket
  CHECK(pool.Tokens("b") == 5);
}

TEST_CASE("the retry budget pool keeps its invariants under concurrent use", "[retry]") {
  RetryBudgetPool pool;
  const RetryBudgetSettings settings{.ratio = 0.3, .burst = 4};
  const RetryInput input{.effect = EffectClass::kRead,
                         .failure = FailureClass::kRejectedTransient,
                         .attempt = 1,
                         .remaining_budget_ms = 60000,
                         .sample = 0.5};
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  std::atomic<int> first_attempts{0};
  std::atomic<int> retries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string backend = t % 2 == 0 ? "even" : "odd";
      for (int i = 0; i < kRounds; ++i) {
        pool.RecordFirstAttempt("shared", settings);
        ++first_attempts;
        if (pool.DecideAndWithdraw("shared", settings, input).retry) ++retries;
        pool.DecideOnly(backend, settings, input);
        (void)pool.Tokens("shared");
      }
    });
  }
  for (auto& thread : threads) thread.join();

  const double tokens = pool.Tokens("shared");
  CHECK(tokens >= 0);
  CHECK(tokens <= settings.burst);
  // Retries never exceed what the bucket held plus what was deposited.
  CHECK(retries.load() <= settings.burst + settings.ratio * first_attempts.load() + 1e-6);
  CHECK(pool.Tokens("even") == settings.burst);
  CHECK(pool.Tokens("odd") == settings.burst);
}

TEST_CASE("retry events have the trace names of the contract", "[retry]") {
  CHECK(RetryEventName(Kind::kRetryScheduled) == "retry.scheduled");
  CHECK(RetryEventName(Kind::kRetrySuppressed) == "retry.suppressed");
  CHECK(RetryEventName(Kind::kWouldHave) == "retry.would_have");
}

}  // namespace
}  // namespace keel::retry_executor_test
