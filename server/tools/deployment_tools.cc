#include "server/tools/deployment_tools.h"

#include <optional>

#include "ledger/database.h"
#include "protocol/iso_time.h"
#include "server/runtime/clock.h"
#include "server/runtime/random_hex.h"

namespace keel {
namespace {

constexpr const char* kBackend = "deployment-api";
constexpr int64_t kRestartingMs = 2000;

// A simulated backend tool: one request per call, with the faults the plan injects.
class BackendTool : public Tool {
 public:
  BackendTool(std::shared_ptr<LedgerService> ledger, std::shared_ptr<FaultPlan> faults)
      : ledger_(std::move(ledger)), faults_(std::move(faults)) {
    spec_.task_support = TaskSupport::kForbidden;
    spec_.backend = kBackend;
  }
  const ToolSpec& spec() const override { return spec_; }

  Json Call(ToolContext& ctx) override {
    const FaultAction fault = faults_->Next(spec_.name);
    const auto sent = std::chrono::steady_clock::now();
    if (fault.latency_ms > 0) {
      const TimePoint answer_at = sent + Millis(fault.latency_ms);
      const TimePoint until = std::min(answer_at, ctx.deadline());
      ctx.token().WaitUntil(until);
      ctx.checkpoint();
      if (answer_at > ctx.deadline()) {
        // The request is out; whether the backend acted on it is unknown. The time is the
        // attempt's, as the attempt timeout counts it (from before `sent`), when the call
        // runner said when the attempt started.
        const TimePoint from =
            ctx.attempt_started() == TimePoint{} ? TimePoint(sent) : ctx.attempt_started();
        const int64_t waited = ToMillis(std::chrono::steady_clock::now() - from);
        return ErrorResult("The deployment API did not answer within the attempt timeout (" +
                               std::to_string(waited) +
                               " ms); the request may have been "
                               "carried out.",
                           Json{{"type", "attempt_timeout"},
                                {"layer", "attempt"},
                                {"elapsed_ms", waited},
                                {"backend", kBackend}});
      }
    }
    if (fault.refuse_503) {
      return ErrorResult("The deployment API answered 503 Service Unavailable; nothing was done.",
                         Json{{"type", "backend_503"}, {"status", 503}, {"backend", kBackend}});
    }
    Json result = Serve(ctx);
    if (fault.lose_response && !result.value("isError", false)) {
      return LostResponse(result);
    }
    return result;
  }

 protected:
  virtual Json Serve(ToolContext& ctx) = 0;
  // The answer when the backend carried the request out but its response was lost.
  virtual Json LostResponse(const Json& served) {
    (void)served;
    return ErrorResult("The deployment API's response was lost after the request was sent.",
                       Json{{"type", "lost_response"}, {"backend", kBackend}});
  }

  ToolSpec spec_;
  std::shared_ptr<LedgerService> ledger_;

 private:
  std::shared_ptr<FaultPlan> faults_;
};

class GetDeploymentJob final : public BackendTool {
 public:
  GetDeploymentJob(std::shared_ptr<LedgerService> ledger, std::shared_ptr<FaultPlan> faults)
      : BackendTool(std::move(ledger), std::move(faults)) {
    spec_.name = "get_deployment_job";
    spec_.title = "Get a deployment job (simulated backend)";
    spec_.description =
        "Read-only: the current state of a deployment job (running or restarting), its "
        "environment, version, restart count and last restart operation, from the simulated "
        "deployment API. Jobs: web-api, worker (production), billing-sync (staging).";
    spec_.input_schema = Json::parse(R"({"type":"object","properties":{
        "job_id":{"type":"string","minLength":1,"maxLength":64}},
      "required":["job_id"],"additionalProperties":false})");
  }

 protected:
  Json Serve(ToolContext& ctx) override {
    const std::string job_id = ctx.arguments().at("job_id").get<std::string>();
    const LedgerService::Lease lease = ledger_->Borrow();
    Statement read = lease.db().Prepare(
        "SELECT environment, version, restarts, last_operation_id, last_restart_ms "
        "FROM deploy_jobs WHERE job_id = ?1");
    read.Bind(1, job_id);
    if (!read.Step()) {
      return ErrorResult("No deployment job '" + job_id +
                             "' (404). Jobs: web-api, worker, "
                             "billing-sync.",
                         Json{{"type", "backend_404"}, {"status", 404}, {"job_id", job_id}});
    }
    const int64_t now = WallClockMs();
    const bool restarting = !read.IsNull(4) && now - read.Int64(4) < kRestartingMs;
    Json job = {{"job_id", job_id},          {"environment", read.Text(0)},
                {"version", read.Text(1)},   {"state", restarting ? "restarting" : "running"},
                {"restarts", read.Int64(2)}, {"observed_at", IsoTime(now)},
                {"freshness", "fresh"}};
    if (!read.IsNull(3)) job["last_operation_id"] = read.Text(3);
    const std::string text = "Job " + job_id + " (" + read.Text(0) + ") is " +
                             job["state"].get<std::string>() + ", version " + read.Text(1) + ", " +
                             std::to_string(read.Int64(2)) + " restart(s).";
    return StructuredResult(text, std::move(job));
  }
};

class RestartDeploymentJob final : public BackendTool {
 public:
  RestartDeploymentJob(std::shared_ptr<LedgerService> ledger, std::shared_ptr<FaultPlan> faults)
      : BackendTool(std::move(ledger), std::move(faults)) {
    spec_.name = "restart_deployment_job";
    spec_.title = "Restart a deployment job (simulated backend, needs approval)";
    spec_.effect = EffectClass::kUnsafeWrite;
    spec_.description =
        "Restarts a deployment job. Needs an approval_id. The backend creates one restart "
        "operation per idempotency key, made of intent_id, job_id, environment and "
        "approval_id: the same request again returns the same operation_id. After an "
        "ambiguous failure keel does not retry: look the key up with "
        "lookup_deployment_operation before deciding anything.";
    spec_.input_schema = Json::parse(R"({"type":"object","properties":{
        "job_id":{"type":"string","minLength":1,"maxLength":64},
        "environment":{"type":"string","enum":["production","staging"]},
        "intent_id":{"type":"string","minLength":1,"maxLength":128}},
      "required":["job_id","environment","intent_id"],"additionalProperties":false})");
    // approval_id: the catalog says approval: required, which adds the argument and makes
    // keel refuse a call without it before the backend is asked.
  }

 protected:
  Json Serve(ToolContext& ctx) override {
    const Json& args = ctx.arguments();
    const std::string job_id = args.at("job_id").get<std::string>();
    const std::string environment = args.at("environment").get<std::string>();
    const std::string key = KeyOf(args);
    const LedgerService::Lease lease = ledger_->Borrow();
    Database& db = lease.db();
    WriteTransaction txn(db);
    {
      Statement existing = db.Prepare(
          "SELECT operation_id, created_ms FROM deploy_operations WHERE idempotency_key = ?1");
      existing.Bind(1, key);
      if (existing.Step()) {
        Json op = Operation(existing.Text(0), job_id, environment, key, existing.Int64(1));
        op["replayed"] = true;
        return StructuredResult("Restart of " + job_id + " already accepted as operation " +
                                    existing.Text(0) +
                                    " (same idempotency key); nothing new was done.",
                                std::move(op));
      }
    }
    Statement job = db.Prepare("SELECT environment FROM deploy_jobs WHERE job_id = ?1");
    job.Bind(1, job_id);
    if (!job.Step()) {
      return ErrorResult("No deployment job '" + job_id + "' (404); nothing was done.",
                         Json{{"type", "backend_404"}, {"status", 404}, {"job_id", job_id}});
    }
    if (job.Text(0) != environment) {
      return ErrorResult("Job '" + job_id + "' runs in " + job.Text(0) + ", not " + environment +
                             " (409); nothing was done.",
                         Json{{"type", "backend_409"}, {"status", 409}, {"job_id", job_id}});
    }
    const std::string operation_id = "op_" + RandomHex(8);
    const int64_t now = WallClockMs();
    db.Prepare(
          "INSERT INTO deploy_operations(operation_id, idempotency_key, job_id, environment, "
          "intent_id, approval_id, kind, created_ms) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'restart', ?7)")
        .Bind(1, operation_id)
        .Bind(2, key)
        .Bind(3, job_id)
        .Bind(4, environment)
        .Bind(5, args.at("intent_id").get<std::string>())
        .Bind(6, args.at("approval_id").get<std::string>())
        .Bind(7, now)
        .Run();
    db.Prepare(
          "UPDATE deploy_jobs SET restarts = restarts + 1, last_operation_id = ?2, "
          "last_restart_ms = ?3 WHERE job_id = ?1")
        .Bind(1, job_id)
        .Bind(2, operation_id)
        .Bind(3, now)
        .Run();
    txn.Commit();
    return StructuredResult("Restart of " + job_id + " (" + environment +
                                ") accepted as operation " + operation_id + ".",
                            Operation(operation_id, job_id, environment, key, now));
  }

  Json LostResponse(const Json& served) override {
    const std::string key = served["structuredContent"].value("idempotency_key", "");
    return ErrorResult(
        "The deployment API's response was lost after the restart request was sent: the "
        "restart may have been accepted. Look up idempotency key '" +
            key + "' with lookup_deployment_operation before doing anything else.",
        Json{{"type", "lost_response"}, {"backend", kBackend}, {"idempotency_key", key}});
  }

 private:
  static std::string KeyOf(const Json& args) {
    return RestartKey(
        args.at("job_id").get<std::string>(), args.at("environment").get<std::string>(),
        args.at("intent_id").get<std::string>(), args.at("approval_id").get<std::string>());
  }
  static Json Operation(const std::string& id, const std::string& job, const std::string& env,
                        const std::string& key, int64_t created_ms) {
    return Json{{"operation_id", id},  {"job_id", job},
                {"environment", env},  {"idempotency_key", key},
                {"state", "accepted"}, {"accepted_at", IsoTime(created_ms)}};
  }
};

class LookupDeploymentOperation final : public BackendTool {
 public:
  LookupDeploymentOperation(std::shared_ptr<LedgerService> ledger,
                            std::shared_ptr<FaultPlan> faults)
      : BackendTool(std::move(ledger), std::move(faults)) {
    spec_.name = "lookup_deployment_operation";
    spec_.title = "Look up a deployment operation by idempotency key (simulated backend)";
    spec_.description =
        "Read-only: the operation the deployment API created under an idempotency key, if "
        "any. Use it after an ambiguous restart (a lost response, a timeout) to learn whether "
        "the restart happened.";
    spec_.input_schema = Json::parse(R"({"type":"object","properties":{
        "idempotency_key":{"type":"string","minLength":1,"maxLength":512}},
      "required":["idempotency_key"],"additionalProperties":false})");
  }

 protected:
  Json Serve(ToolContext& ctx) override {
    const std::string key = ctx.arguments().at("idempotency_key").get<std::string>();
    const LedgerService::Lease lease = ledger_->Borrow();
    Statement read = lease.db().Prepare(
        "SELECT operation_id, job_id, environment, created_ms FROM deploy_operations "
        "WHERE idempotency_key = ?1");
    read.Bind(1, key);
    if (!read.Step()) {
      return StructuredResult("No operation under idempotency key '" + key +
                                  "': the deployment API never accepted that request.",
                              Json{{"found", false}, {"idempotency_key", key}});
    }
    return StructuredResult("Operation " + read.Text(0) + " (restart of " + read.Text(1) + ", " +
                                read.Text(2) + ") was accepted under key '" + key + "'.",
                            Json{{"found", true},
                                 {"operation_id", read.Text(0)},
                                 {"job_id", read.Text(1)},
                                 {"environment", read.Text(2)},
                                 {"idempotency_key", key},
                                 {"accepted_at", IsoTime(read.Int64(3))}});
  }
};

}  // namespace

std::string RestartKey(const std::string& job_id, const std::string& environment,
                       const std::string& intent_id, const std::string& approval_id) {
  return "restart:" + job_id + ":" + environment + ":" + intent_id + ":" + approval_id;
}

std::set<std::string> DeploymentToolNames() {
  return {"get_deployment_job", "restart_deployment_job", "lookup_deployment_operation"};
}

std::vector<std::unique_ptr<Tool>> MakeDeploymentTools(std::shared_ptr<LedgerService> ledger,
                                                       std::shared_ptr<FaultPlan> faults) {
  if (!faults) faults = std::make_shared<FaultPlan>();
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(std::make_unique<GetDeploymentJob>(ledger, faults));
  tools.push_back(std::make_unique<RestartDeploymentJob>(ledger, faults));
  tools.push_back(std::make_unique<LookupDeploymentOperation>(ledger, faults));
  return tools;
}

}  // namespace keel
