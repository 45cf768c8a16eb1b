// RemoteWrite (IDEM-5): a keyed write whose effect is outside keel runs at
// most once per key; each outcome class records what it must in the ledger; an ambiguous
// outcome is reconciled by the lookup (happened / did not happen / unknown); claims left by a
// dead keel are adopted and looked up, at the next call or at start-up.
#include "server/durable/remote_write.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "fakes/temp_ledger.h"
#include "ledger/fingerprint.h"
#include "server/policy/failure_classify.h"
#include "server/runtime/process_attempt.h"

namespace keel::remote_write_test {
namespace {

constexpr const char* kSelf = "keel-1-self";

Json Ok(const std::string& op) { return StructuredResult("done " + op, Json{{"op", op}}); }

Json Failed(const std::string& type, const std::string& failure_class = "") {
  Json error = {{"type", type}};
  if (!failure_class.empty()) error["failure_class"] = failure_class;
  return ErrorResult("failed: " + type, error);
}

Reconciled Found(Reconciled::Outcome outcome, Json result = Json()) {
  Reconciled found;
  found.outcome = outcome;
  found.result = std::move(result);
  return found;
}

// A field of the result's structured error; null when the result is not an error.
Json ErrorField(const Json& result, const char* name) {
  const Json* error = StructuredErrorOf(result);
  return error != nullptr && error->contains(name) ? error->at(name) : Json();
}
std::string ErrorType(const Json& result) {
  const Json type = ErrorField(result, "type");
  return type.is_string() ? type.get<std::string>() : "(not an error: " + result.dump() + ")";
}

bool MetaFlag(const Json& result, const char* name) {
  const auto meta = result.find("_meta");
  return meta != result.end() && meta->value(name, false);
}

class Fixture {
 public:
  Fixture() : ledger_(kSelf) {}

  // One call of tool "restart" under `key` whose effect returns `result`.
  Json Call(const std::string& key, Json result, EffectClass effect = EffectClass::kUnsafeWrite,
            std::function<Reconciled()> lookup = nullptr, AttemptGoneFn attempt_gone = nullptr) {
    RemoteWriteCall call;
    call.tool = "restart";
    call.key = key;
    call.intent_arguments = Json{{"job", "web"}};
    call.effect = effect;
    RemoteWriteOps ops;
    ops.run = [&] {
      ++runs;
      return result;
    };
    if (lookup) {
      ops.lookup = [&] {
        ++lookups;
        return lookup();
      };
    }
    ops.attempt_gone = std::move(attempt_gone);
    return RunRemoteWrite(*ledger_, call, ops);
  }
  std::optional<LedgerRecord> Row(const std::string& key) {
    return ledger_->Borrow().ledger().Lookup("restart", key);
  }
  // A claim on `key` by another process `owner` that never records an outcome.
  // With `attempt`, the claim records that run (as a command tool's claim does).
  void AbandonedClaim(const std::string& owner, const std::string& key,
                      std::optional<LedgerAttempt> attempt = std::nullopt) {
    auto other = ledger_.OpenAs(owner);
    const auto claim =
        other->Borrow().ledger().Claim("restart", key, Fingerprint("restart", Json{{"job", "web"}}),
                                       std::chrono::milliseconds(1000));
    REQUIRE(claim.status == MutationLedger::Status::kExecuted);
    if (attempt) REQUIRE(other->Borrow().ledger().RecordAttempt("restart", key, *attempt));
  }
  LedgerService& ledger() { return *ledger_; }

  int runs = 0;
  int lookups = 0;

 private:
  TempLedger ledger_;
};

// An owner whose process surely runs (our parent) and one whose pid cannot exist.
std::string LiveOwner() { return "keel-" + std::to_string(getppid()) + "-other"; }
const std::string kDeadOwner = "keel-999999999-dead";

TEST_CASE("a keyed remote write that succeeds commits and is replayed, never re-run", "[remote]") {
  Fixture f;
  CHECK(f.Call("k1", Ok("op_1")).at("structuredContent").at("op") == "op_1");
  const Json again = f.Call("k1", Ok("op_2"));
  CHECK(again.at("structuredContent").at("op") == "op_1");
  CHECK(MetaFlag(again, "dev.keel/replayed"));
  CHECK(f.runs == 1);
  CHECK(f.Row("k1")->state == LedgerState::kCommitted);
}

TEST_CASE("an ambiguous write that the lookup finds is answered with its result, not re-run",
          "[remote]") {
  Fixture f;
  auto lookup = [] { return Found(Reconciled::Outcome::kHappened, Ok("op_9")); };
  const Json result = f.Call("k", Failed("attempt_timeout"), EffectClass::kUnsafeWrite, lookup);
  CHECK_FALSE(result.value("isError", false));
  CHECK(result.at("structuredContent").at("op") == "op_9");
  CHECK(MetaFlag(result, "dev.keel/reconciled"));
  CHECK(f.Row("k")->state == LedgerState::kCommitted);
  const Json again = f.Call("k", Ok("op_new"), EffectClass::kUnsafeWrite, lookup);
  CHECK(again.at("structuredContent").at("op") == "op_9");
  CHECK(MetaFlag(again, "dev.keel/replayed"));
  CHECK(f.runs == 1);
  CHECK(f.lookups == 1);
}

TEST_CASE("an ambiguous write the lookup says did not happen becomes safe to run again",
          "[remote]") {
  Fixture f;
  auto lookup = [] { return Found(Reconciled::Outcome::kDidNotHappen); };
  const Json result =
      f.Call("k", Failed("command_killed", "ambiguous"), EffectClass::kUnsafeWrite, lookup);
  const auto failure = ClassifyResult(result);
  REQUIRE(failure);
  CHECK(failure->failure == FailureClass::kNotSent);
  CHECK(StructuredErrorOf(result)->at("reconciled") == "did_not_happen");
  CHECK(StructuredErrorOf(result)->at("effect") == "none");
  CHECK_FALSE(f.Row("k").has_value());
  CHECK_FALSE(f.Call("k", Ok("op_2"), EffectClass::kUnsafeWrite, lookup).value("isError", false));
  CHECK(f.runs == 2);
}

TEST_CASE("an ambiguous unsafe write nothing can reconcile is never run again under its key",
          "[remote]") {
  Fixture f;
  const Json result = f.Call("k", Failed("attempt_timeout"));
  CHECK(StructuredErrorOf(result)->at("needs_reconciliation") == true);
  CHECK(StructuredErrorOf(result)->at("effect") == "unknown");
  CHECK_THAT(result.at("content").at(0).at("text").get<std::string>(),
             Catch::Contains("Nothing could tell whether it happened"));
  CHECK(f.Row("k")->state == LedgerState::kNeedsReconciliation);
  const Json again = f.Call("k", Ok("op_2"));
  CHECK(StructuredErrorOf(again)->at("type") == "needs_reconciliation");
  CHECK(f.runs == 1);
}

TEST_CASE("an ambiguous idempotent write nothing can reconcile runs again under its key",
          "[remote]") {
  Fixture f;
  f.Call("k", Failed("attempt_timeout"), EffectClass::kIdempotentWrite);
  const Json again = f.Call("k", Ok("op_2"), EffectClass::kIdempotentWrite);
  CHECK(again.at("structuredContent").at("op") == "op_2");
  CHECK(f.runs == 2);
  CHECK(f.Row("k")->state == LedgerState::kCommitted);
}

TEST_CASE("a transient or not-sent failure drops the claim so a retry runs", "[remote]") {
  Fixture f;
  f.Call("a", Failed("command_tempfail", "rejected_transient"));
  CHECK_FALSE(f.Row("a").has_value());
  f.Call("b", Failed("command_unavailable", "not_sent"));
  CHECK_FALSE(f.Row("b").has_value());
  f.Call("a", Ok("op"));
  CHECK(f.runs == 3);
}

TEST_CASE("a permanent failure is stored and replayed, unless nothing ran", "[remote]") {
  Fixture f;
  f.Call("k", Failed("command_failed", "rejected_permanent"));
  const Json again = f.Call("k", Ok("op"));
  CHECK(again.value("isError", false));
  CHECK(MetaFlag(again, "dev.keel/replayed"));
  CHECK(f.runs == 1);
  CHECK(f.Row("k")->state == LedgerState::kFailed);

  Json not_started = Failed("command_not_started", "rejected_permanent");
  not_started["structuredContent"]["error"]["effect"] = "none";
  f.Call("n", not_started);
  CHECK_FALSE(f.Row("n").has_value());
  CHECK_FALSE(f.Call("n", Ok("op")).value("isError", false));
  CHECK(f.runs == 3);
}

// A command's {"error": {...}} reaches the ledger as printed: an "effect" that is not a string
// threw nlohmann's type_error and left the claim without an outcome.
TEST_CASE("a failure whose effect is not a string is stored like any permanent failure",
          "[remote]") {
  Fixture f;
  Json odd = Failed("command_failed", "rejected_permanent");
  odd["structuredContent"]["error"]["effect"] = 5;
  CHECK(f.Call("k", odd).value("isError", false));
  CHECK(f.Row("k")->state == LedgerState::kFailed);
  CHECK(MetaFlag(f.Call("k", Ok("op")), "dev.keel/replayed"));
  CHECK(f.runs == 1);
}

TEST_CASE("a claim left by a dead keel is adopted and looked up before anything runs", "[remote]") {
  Fixture f;
  f.AbandonedClaim(kDeadOwner, "k");  // its lease is still live, but its process is gone
  auto lookup = [] { return Found(Reconciled::Outcome::kHappened, Ok("op_before_crash")); };
  const Json result = f.Call("k", Ok("op_again"), EffectClass::kUnsafeWrite, lookup);
  CHECK(result.at("structuredContent").at("op") == "op_before_crash");
  CHECK(MetaFlag(result, "dev.keel/reconciled"));
  CHECK(f.runs == 0);
  CHECK(f.Row("k")->state == LedgerState::kCommitted);
  CHECK(f.Row("k")->owner == kSelf);
}

TEST_CASE("a dead keel's claim that did not happen runs once now", "[remote]") {
  Fixture f;
  f.AbandonedClaim(kDeadOwner, "k");
  auto lookup = [] { return Found(Reconciled::Outcome::kDidNotHappen); };
  CHECK(f.Call("k", Ok("op_now"), EffectClass::kUnsafeWrite, lookup)
            .at("structuredContent")
            .at("op") == "op_now");
  CHECK(f.runs == 1);
}

TEST_CASE("a live claim of another keel answers in progress and runs nothing", "[remote]") {
  Fixture f;
  f.AbandonedClaim(LiveOwner(), "k");
  auto lookup = [] { return Found(Reconciled::Outcome::kHappened, Ok("op")); };
  const Json result = f.Call("k", Ok("op"), EffectClass::kUnsafeWrite, lookup);
  CHECK(StructuredErrorOf(result)->at("type") == "idempotency_in_progress");
  CHECK(f.runs == 0);
  CHECK(f.lookups == 0);
}

TEST_CASE("start-up reconciliation settles what a dead keel left and skips live claims",
          "[remote]") {
  Fixture f;
  f.AbandonedClaim(kDeadOwner, "happened");
  f.AbandonedClaim(kDeadOwner, "not-happened");
  f.AbandonedClaim(kDeadOwner, "unknown");
  f.AbandonedClaim(LiveOwner(), "live");
  std::vector<std::string> looked_up;
  const size_t settled =
      ReconcileUnsettled(f.ledger(), "restart", kSelf, [&](const std::string& key) {
        looked_up.push_back(key);
        if (key == "happened") return Found(Reconciled::Outcome::kHappened, Ok("op_h"));
        if (key == "not-happened") return Found(Reconciled::Outcome::kDidNotHappen);
        return Found(Reconciled::Outcome::kUnknown);
      });
  CHECK(settled == 2);
  CHECK(looked_up == std::vector<std::string>{"happened", "not-happened", "unknown"});
  CHECK(f.Row("happened")->state == LedgerState::kCommitted);
  CHECK(f.Row("happened")->result.at("structuredContent").at("op") == "op_h");
  CHECK_FALSE(f.Row("not-happened").has_value());
  CHECK(f.Row("unknown")->state == LedgerState::kNeedsReconciliation);
  CHECK(f.Row("live")->state == LedgerState::kInProgress);
  CHECK(f.Row("live")->owner == LiveOwner());
}

TEST_CASE("a ledger owner is gone when its pid runs nothing or is now ours", "[remote]") {
  CHECK(LedgerOwnerGone(kDeadOwner, kSelf));
  CHECK_FALSE(LedgerOwnerGone(LiveOwner(), kSelf));
  const std::string ours = "keel-" + std::to_string(getpid()) + "-";
  CHECK(LedgerOwnerGone(ours + "earlier", ours + "now"));
  CHECK_FALSE(LedgerOwnerGone(ours + "now", ours + "now"));
  CHECK_FALSE(LedgerOwnerGone("test-owner", kSelf));
  CHECK_FALSE(LedgerOwnerGone("keel-abc-x", kSelf));
}

// The run a dead keel left behind, and a fake that says whether it still runs.
const LedgerAttempt kOrphan{"boot-1", 4242, 987654};
struct FakeLiveness {
  bool running = true;
  std::vector<LedgerAttempt> asked;
  AttemptGoneFn Fn() {
    return [this](const LedgerAttempt& attempt) {
      asked.push_back(attempt);
      return !running;
    };
  }
};

TEST_CASE("a did-not-happen lookup does not release a dead keel's claim while its command runs",
          "[remote]") {
  Fixture f;
  f.AbandonedClaim(kDeadOwner, "k", kOrphan);
  FakeLiveness orphan;
  auto lookup = [] { return Found(Reconciled::Outcome::kDidNotHappen); };
  const Json held = f.Call("k", Ok("op_twice"), EffectClass::kUnsafeWrite, lookup, orphan.Fn());
  CHECK(ErrorType(held) == "idempotency_in_progress");
  CHECK(ErrorField(held, "retry_after_ms") == 1000);
  CHECK(f.runs == 0);
  CHECK(f.lookups == 1);
  CHECK(orphan.asked == std::vector<LedgerAttempt>{kOrphan});
  CHECK(f.Row("k")->state == LedgerState::kNeedsReconciliation);
  CHECK(f.Row("k")->attempt == kOrphan);  // kept for the next look

  orphan.running = false;  // it ended without its effect: now "did not happen" holds
  CHECK(f.Call("k", Ok("op_now"), EffectClass::kUnsafeWrite, lookup, orphan.Fn())
            .at("structuredContent")
            .at("op") == "op_now");
  CHECK(f.runs == 1);
  CHECK(f.Row("k")->state == LedgerState::kCommitted);
}

TEST_CASE(
    "a dead keel's claim whose command still runs is committed as soon as the lookup "
    "finds the write",
    "[remote]") {
  Fixture f;
  f.AbandonedClaim(kDeadOwner, "k", kOrphan);
  FakeLiveness orphan;
  bool written = false;
  auto lookup = [&] {
    return written ? Found(Reconciled::Outcome::kHappened, Ok("op_orphan"))
                   : Found(Reconciled::Outcome::kDidNotHappen);
  };
  CHECK(ErrorType(f.Call("k", Ok("op_x"), EffectClass::kUnsafeWrite, lookup, orphan.Fn())) ==
        "idempotency_in_progress");
  written = true;  // the orphan wrote; it may still be running
  const Json settled = f.Call("k", Ok("op_x"), EffectClass::kUnsafeWrite, lookup, orphan.Fn());
  CHECK(settled.at("structuredContent").at("op") == "op_orphan");
  CHECK(MetaFlag(settled, "dev.keel/reconciled"));
  CHECK(f.runs == 0);
  CHECK(f.Row("k")->state == LedgerState::kCommitted);
}

TEST_CASE("an idempotent write whose orphaned command still runs is not run again beside it",
          "[remote]") {
  Fixture f;
  f.AbandonedClaim(kDeadOwner, "k", kOrphan);
  FakeLiveness orphan;
  const Json held = f.Call(
      "k", Ok("op"), EffectClass::kIdempotentWrite,
      [] { return Found(Reconciled::Outcome::kUnknown); }, orphan.Fn());
  CHECK(ErrorType(held) == "idempotency_in_progress");
  CHECK(f.runs == 0);
}

TEST_CASE("a claim whose command was started but never identified is not released on this boot",
          "[remote]") {
  Fixture f;
  // The real check: keel died between the claim and recording the spawned group.
  f.AbandonedClaim(kDeadOwner, "k", StartingAttempt());
  auto lookup = [] { return Found(Reconciled::Outcome::kDidNotHappen); };
  const Json held = f.Call("k", Ok("op"), EffectClass::kUnsafeWrite, lookup);
  CHECK(ErrorType(held) == "needs_reconciliation");
  CHECK(f.runs == 0);
  CHECK(f.Row("k")->state == LedgerState::kNeedsReconciliation);
}

TEST_CASE("a claim whose command ran on an earlier boot is released by a did-not-happen lookup",
          "[remote]") {
  Fixture f;
  LedgerAttempt before_reboot = StartingAttempt();
  before_reboot.boot_id = "not-" + BootId();
  f.AbandonedClaim(kDeadOwner, "k", before_reboot);
  auto lookup = [] { return Found(Reconciled::Outcome::kDidNotHappen); };
  CHECK(f.Call("k", Ok("op_now"), EffectClass::kUnsafeWrite, lookup)
            .at("structuredContent")
            .at("op") == "op_now");
  CHECK(f.runs == 1);
}

TEST_CASE("start-up reconciliation leaves a claim whose command runs and settles it once gone",
          "[remote]") {
  Fixture f;
  f.AbandonedClaim(kDeadOwner, "running", kOrphan);
  f.AbandonedClaim(kDeadOwner, "no-run-recorded");
  FakeLiveness orphan;
  auto not_happened = [](const std::string&) { return Found(Reconciled::Outcome::kDidNotHappen); };
  CHECK(ReconcileUnsettled(f.ledger(), "restart", kSelf, not_happened, orphan.Fn()) == 1);
  CHECK(f.Row("running")->state == LedgerState::kNeedsReconciliation);
  CHECK(f.Row("running")->attempt == kOrphan);
  CHECK_FALSE(f.Row("no-run-recorded").has_value());  // nothing to wait for: released

  // The next keel (a new owner) finds the orphan gone.
  orphan.running = false;
  CHECK(ReconcileUnsettled(f.ledger(), "restart", "keel-2-next", not_happened, orphan.Fn()) == 1);
  CHECK_FALSE(f.Row("running").has_value());
}

}  // namespace
}  // namespace keel::remote_write_test
