// The simulated deployment backend and its fault injection (FLT-1..4): the jobs it
// serves, one restart operation per idempotency key, the lookup by key, and each fault —
// latency within the attempt deadline or past it (attempt_timeout), N failures with 503
// then success, a sustained 503 outage driven by an injected clock, and a response lost
// after the backend accepted the operation.
#include "server/tools/deployment_tools.h"

#include <catch2/catch.hpp>

#include "fakes/temp_ledger.h"
#include "server/policy/failure_classify.h"

namespace keel::deployment_tools_test {
namespace {

class Backend {
 public:
  explicit Backend(std::map<std::string, FaultSpec> faults = {}) {
    plan_ = std::make_shared<FaultPlan>(std::move(faults), [this] { return now_; });
    tools_ = MakeDeploymentTools(ledger_.service(), plan_);
  }

  Json Call(const std::string& name, Json args, Millis deadline_in = Millis(60000)) {
    for (auto& tool : tools_) {
      if (tool->spec().name != name) continue;
      ToolContext ctx(std::move(args), CancellationToken(), nullptr);
      ctx.set_deadline(std::chrono::steady_clock::now() + deadline_in);
      return tool->Call(ctx);
    }
    FAIL("no tool " << name);
    return Json();
  }
  void Advance(Millis d) { now_ += d; }
  int64_t Operations() {
    const LedgerService::Lease lease = ledger_->Borrow();
    Statement s = lease.db().Prepare("SELECT COUNT(*) FROM deploy_operations");
    REQUIRE(s.Step());
    return s.Int64(0);
  }

 private:
  TempLedger ledger_;
  std::shared_ptr<FaultPlan> plan_;
  std::vector<std::unique_ptr<Tool>> tools_;
  TimePoint now_ = TimePoint() + std::chrono::hours(1);
};

Json Restart(const char* intent = "intent-1", const char* approval = "ap-1") {
  return Json{{"job_id", "web-api"},
              {"environment", "production"},
              {"intent_id", intent},
              {"approval_id", approval}};
}

std::string ErrorType(const Json& result) {
  return result["structuredContent"]["error"].value("type", "");
}

TEST_CASE("get_deployment_job reads a seeded job as fresh state and refuses an unknown one",
          "[deployment]") {
  Backend b;
  const Json job = b.Call("get_deployment_job", {{"job_id", "web-api"}});
  CHECK(job["structuredContent"]["environment"] == "production");
  CHECK(job["structuredContent"]["state"] == "running");
  CHECK(job["structuredContent"]["freshness"] == "fresh");
  const Json missing = b.Call("get_deployment_job", {{"job_id", "nope"}});
  CHECK(ErrorType(missing) == "backend_404");
  CHECK(ClassifyResult(missing)->failure == FailureClass::kRejectedPermanent);
}

TEST_CASE("the backend creates one restart operation per idempotency key", "[deployment]") {
  Backend b;
  const Json first = b.Call("restart_deployment_job", Restart());
  const std::string op = first["structuredContent"]["operation_id"].get<std::string>();
  CHECK(op.rfind("op_", 0) == 0);
  CHECK(first["structuredContent"]["idempotency_key"] ==
        RestartKey("web-api", "production", "intent-1", "ap-1"));
  const Json again = b.Call("restart_deployment_job", Restart());
  CHECK(again["structuredContent"]["operation_id"] == op);
  CHECK(again["structuredContent"]["replayed"] == true);
  CHECK(b.Operations() == 1);
  // A new approval is a new intent: a second operation.
  b.Call("restart_deployment_job", Restart("intent-1", "ap-2"));
  CHECK(b.Operations() == 2);
  const Json job = b.Call("get_deployment_job", {{"job_id", "web-api"}});
  CHECK(job["structuredContent"]["restarts"] == 2);
  CHECK(job["structuredContent"]["state"] == "restarting");
  // The wrong environment is refused without an operation.
  Json wrong = Restart("intent-9");
  wrong["environment"] = "staging";
  CHECK(ErrorType(b.Call("restart_deployment_job", wrong)) == "backend_409");
  CHECK(b.Operations() == 2);
}

TEST_CASE("fail_503 refuses the first N calls with a transient 503, then the backend answers",
          "[deployment]") {
  FaultSpec spec;
  spec.fail_503 = 1;
  Backend b({{"get_deployment_job", spec}});
  const Json refused = b.Call("get_deployment_job", {{"job_id", "web-api"}});
  CHECK(ErrorType(refused) == "backend_503");
  CHECK(ClassifyResult(refused)->failure == FailureClass::kRejectedTransient);
  CHECK(b.Call("get_deployment_job", {{"job_id", "web-api"}})["structuredContent"]["state"] ==
        "running");
}

TEST_CASE("sustained_503 refuses every call for its duration from the first call on",
          "[deployment]") {
  FaultSpec spec;
  spec.sustained_503_ms = 90000;
  Backend b({{"get_deployment_job", spec}});
  CHECK(ErrorType(b.Call("get_deployment_job", {{"job_id", "web-api"}})) == "backend_503");
  b.Advance(Millis(89999));
  CHECK(ErrorType(b.Call("get_deployment_job", {{"job_id", "web-api"}})) == "backend_503");
  b.Advance(Millis(1));
  CHECK(b.Call("get_deployment_job", {{"job_id", "web-api"}}).value("isError", false) == false);
}

TEST_CASE("start_after lets the first N calls through before the faults begin", "[deployment]") {
  FaultSpec spec;
  spec.start_after = 2;
  spec.sustained_503_ms = 1000;
  Backend b({{"get_deployment_job", spec}});
  CHECK(b.Call("get_deployment_job", {{"job_id", "web-api"}}).value("isError", false) == false);
  b.Advance(Millis(5000));  // the outage clock starts at the first faulty call, not before
  CHECK(b.Call("get_deployment_job", {{"job_id", "web-api"}}).value("isError", false) == false);
  CHECK(ErrorType(b.Call("get_deployment_job", {{"job_id", "web-api"}})) == "backend_503");
  b.Advance(Millis(999));
  CHECK(ErrorType(b.Call("get_deployment_job", {{"job_id", "web-api"}})) == "backend_503");
  b.Advance(Millis(1));
  CHECK(b.Call("get_deployment_job", {{"job_id", "web-api"}}).value("isError", false) == false);
}

TEST_CASE(
    "lose_response carries the restart out, then answers lost_response with the key to "
    "look up",
    "[deployment]") {
  FaultSpec spec;
  spec.lose_response = 1;
  Backend b({{"restart_deployment_job", spec}});
  const Json lost = b.Call("restart_deployment_job", Restart());
  CHECK(ErrorType(lost) == "lost_response");
  CHECK(ClassifyResult(lost)->failure == FailureClass::kAmbiguous);
  const std::string key = lost["structuredContent"]["error"]["idempotency_key"].get<std::string>();
  CHECK(key == RestartKey("web-api", "production", "intent-1", "ap-1"));
  CHECK(b.Operations() == 1);  // the backend accepted it
  const Json found = b.Call("lookup_deployment_operation", {{"idempotency_key", key}});
  CHECK(found["structuredContent"]["found"] == true);
  const Json none = b.Call("lookup_deployment_operation", {{"idempotency_key", "other"}});
  CHECK(none["structuredContent"]["found"] == false);
}

TEST_CASE("latency within the attempt deadline delays the answer, past it the attempt times out",
          "[deployment]") {
  FaultSpec spec;
  spec.latency_ms = 30;
  Backend b({{"get_deployment_job", spec}});
  CHECK(b.Call("get_deployment_job", {{"job_id", "web-api"}}).value("isError", false) == false);
  const Json slow = b.Call("get_deployment_job", {{"job_id", "web-api"}}, Millis(5));
  CHECK(ErrorType(slow) == "attempt_timeout");
  CHECK(slow["structuredContent"]["error"]["layer"] == "attempt");
  CHECK(ClassifyResult(slow)->failure == FailureClass::kAmbiguous);
}

TEST_CASE("fault flag values are parsed strictly and name what is wrong", "[deployment]") {
  const std::set<std::string> tools = DeploymentToolNames();
  std::string error;
  auto ok =
      ParseFaults({"get_deployment_job:fail_503=2", "get_deployment_job:latency=50",
                   "restart_deployment_job:lose_response", "get_deployment_job:sustained_503=9000"},
                  tools, &error);
  REQUIRE(ok);
  CHECK((*ok)["get_deployment_job"].fail_503 == 2);
  CHECK((*ok)["get_deployment_job"].latency_ms == 50);
  CHECK((*ok)["get_deployment_job"].sustained_503_ms == 9000);
  CHECK((*ok)["restart_deployment_job"].lose_response == 1);
  for (const char* bad : {"echo:fail_503=1", "get_deployment_job", "get_deployment_job:boom",
                          "get_deployment_job:fail_503", "get_deployment_job:latency=-1",
                          "get_deployment_job:latency=9999999999"}) {
    CAPTURE(bad);
    error.clear();
    CHECK_FALSE(ParseFaults({bad}, tools, &error));
    CHECK(error.find(bad) != std::string::npos);
  }
}

}  // namespace
}  // namespace keel::deployment_tools_test
