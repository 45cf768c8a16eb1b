#include "server/tools/command_tool.h"

#include <algorithm>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "server/call/idempotency_key.h"
#include "server/durable/remote_write.h"
#include "server/runtime/process_attempt.h"
#include "server/runtime/process_runner.h"
#include "server/tools/command_result.h"

namespace keel {
namespace {

// How long after the attempt a claim stays live beyond the child's own time: the kill grace,
// the lookup and the ledger's writes fit in it.
constexpr int64_t kLeaseMarginMs = 5000;

// One fd-3 line (command_result.h ProgressLineOf); anything else is logged and ignored.
void ReportProgressLine(ToolContext& ctx, std::string_view line, const std::string& tool) {
  if (std::optional<ProgressLine> progress = ProgressLineOf(line)) {
    ctx.ReportProgress(progress->progress, progress->total, std::move(progress->message));
    return;
  }
  spdlog::warn(
      "{}: ignored a progress line on fd 3 that is not {{\"progress\": <number>, ...}}: "
      "{:.200}",
      tool, line);
}

void LogStderr(const std::string& tool, const std::string& attempt, const ProcessResult& run) {
  size_t start = 0;
  size_t lines = 0;
  while (start < run.stderr_data.size()) {
    size_t end = run.stderr_data.find('\n', start);
    if (end == std::string::npos) end = run.stderr_data.size();
    if (end > start) {
      if (++lines > kMaxLoggedStderrLines) {
        spdlog::info("[{} {}] (more stderr not logged)", tool, attempt);
        return;
      }
      spdlog::info("[{} {}] {}", tool, attempt,
                   std::string_view(run.stderr_data).substr(start, end - start));
    }
    start = end + 1;
  }
  if (run.stderr_truncated) spdlog::info("[{} {}] (stderr cut at the cap)", tool, attempt);
}

Json ArgumentProblem(const std::string& tool, const std::string& problem) {
  return ErrorResult("Invalid arguments for tool '" + tool + "': " + problem,
                     Json{{"type", "invalid_arguments"}, {"message", problem}, {"effect", "none"}});
}

}  // namespace

CommandTool::CommandTool(ToolSpec spec, CommandSpec command, std::shared_ptr<LedgerService> ledger)
    : spec_(std::move(spec)), command_(std::move(command)), ledger_(std::move(ledger)) {
  spec_.runs_on_loop = false;
}

std::vector<std::string> CommandTool::Environment(const ToolContext* ctx,
                                                  const std::string& key) const {
  std::vector<std::string> env;
  for (const std::string& name : command_.env_pass) {
    if (command_.env_set.count(name) != 0) continue;
    if (const char* value = std::getenv(name.c_str())) env.push_back(name + "=" + value);
  }
  for (const auto& [name, value] : command_.env_set) env.push_back(name + "=" + value);
  env.push_back("KEEL_TOOL=" + spec_.name);
  if (!key.empty()) env.push_back("KEEL_IDEMPOTENCY_KEY=" + key);
  if (ctx == nullptr) return env;
  const CallIdentity& id = ctx->identity();
  env.push_back("KEEL_INTENT_ID=" + id.correlation_id);
  env.push_back("KEEL_ATTEMPT=" + std::to_string(ctx->attempt()));
  env.push_back("KEEL_ATTEMPT_ID=" + ctx->attempt_id());
  env.push_back("KEEL_DEADLINE_MS=" + std::to_string(ctx->remaining().count()));
  env.push_back("KEEL_REQUEST_ID=" +
                (id.request_id.is_null() ? std::string() : id.request_id.dump()));
  if (!id.task_id.empty()) env.push_back("KEEL_TASK_ID=" + id.task_id);
  return env;
}

Json CommandTool::RunOnce(ToolContext& ctx, const std::vector<std::string>& argv,
                          const std::string& key) const {
  if (ctx.cancelled()) {
    // Never started: nothing happened (the answer is dropped; the ledger drops the claim).
    return ErrorResult("cancelled before the command started",
                       Json{{"type", "not_sent"}, {"effect", "none"}});
  }
  ProcessSpec process;
  process.argv = argv;
  process.cwd = command_.cwd;
  process.env = Environment(&ctx, key);
  process.stdin_data = ctx.arguments().dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  process.max_output_bytes = static_cast<size_t>(command_.max_output_bytes);
  process.kill_grace = Millis(command_.kill_grace_ms);
  if (!key.empty() && ledger_) {
    // The claim names the run, so that a keel started after this one dies leaves the key
    // alone while the command may still run (remote_write.h).
    process.on_spawned = [&](pid_t pid) {
      if (!ledger_->Borrow().ledger().RecordAttempt(spec_.name, key, SpawnedAttempt(pid))) {
        spdlog::warn(
            "{} key '{}': could not record the command's process group {} with the "
            "claim; if keel dies now, the key waits for a reboot or a lookup that "
            "finds the write",
            spec_.name, key, pid);
      }
    };
  }
  const ProcessResult run =
      RunProcess(process, ctx.token(), ctx.deadline(), [&](std::string_view line) {
        try {
          ReportProgressLine(ctx, line, spec_.name);
        } catch (const std::exception& e) {
          spdlog::warn("{}: progress line dropped: {}", spec_.name, e.what());
        }
      });
  LogStderr(spec_.name, ctx.attempt_id(), run);
  if (run.end == ProcessResult::End::kSpawnFailed) {
    spdlog::error("{}: cannot start {}: {}", spec_.name, argv[0], run.spawn_error);
  }
  return CommandResultOf(run, command_, spec_.output_schema, spec_.name);
}

Json CommandTool::Call(ToolContext& ctx) {
  ctx.checkpoint();
  Json values = ctx.arguments();
  std::string key;
  if (IsWrite(spec_.effect)) {
    const CallIdentity& id = ctx.identity();
    if (!id.key_problem.empty()) return ArgumentProblem(spec_.name, id.key_problem);
    key = id.idempotency_key;
    if (!key.empty()) values["idempotency_key"] = key;
  }
  std::string problem;
  const auto argv = ExpandArgv(command_.argv, values, &problem);
  if (!argv) {
    if (problem == "no value for {idempotency_key}") {
      problem =
          "this tool's command needs an idempotency key: pass idempotencyKey (or "
          "_meta[\"dev.keel/idempotency-key\"])";
    }
    return ArgumentProblem(spec_.name, problem);
  }
  if (key.empty() || !ledger_) return RunOnce(ctx, *argv, key);

  RemoteWriteCall call;
  call.tool = spec_.name;
  call.key = key;
  call.intent_arguments = ctx.intent_arguments();
  call.effect = spec_.effect;
  call.lease_ms = ctx.remaining().count() + command_.kill_grace_ms +
                  (command_.lookup ? command_.lookup->timeout_ms : 0) + kLeaseMarginMs;
  call.claim_wait = std::clamp(ctx.remaining(), Millis(1), Millis(5000));
  call.starting_attempt = StartingAttempt();
  RemoteWriteOps ops;
  ops.run = [&] { return RunOnce(ctx, *argv, key); };
  if (command_.lookup) ops.lookup = [&] { return LookupKey(key); };
  return RunRemoteWrite(*ledger_, call, ops);
}

Reconciled CommandTool::LookupKey(const std::string& key) const {
  if (!command_.lookup) return Reconciled{};
  std::string problem;
  const auto argv = ExpandArgv(command_.lookup->argv, Json{{"idempotency_key", key}}, &problem);
  if (!argv) {
    spdlog::warn("{}: lookup of key '{}' not run: {}", spec_.name, key, problem);
    return Reconciled{};
  }
  ProcessSpec process;
  process.argv = *argv;
  process.cwd = command_.cwd;
  process.env = Environment(nullptr, key);
  process.env.push_back("KEEL_LOOKUP=1");
  process.stdin_data = Json{{"idempotency_key", key}}.dump() + "\n";
  process.max_output_bytes = static_cast<size_t>(command_.max_output_bytes);
  process.kill_grace = Millis(command_.kill_grace_ms);
  const CancellationToken never;  // a lookup settles the ledger even after a cancel
  const ProcessResult run = RunProcess(
      process, never, std::chrono::steady_clock::now() + Millis(command_.lookup->timeout_ms),
      [](std::string_view) {});
  LogStderr(spec_.name, "lookup", run);
  std::string why;
  Reconciled found = LookupResultOf(run, spec_.output_schema, &why);
  if (found.outcome == Reconciled::Outcome::kUnknown) {
    spdlog::warn("{}: the lookup of key '{}' cannot tell: {}", spec_.name, key, why);
  } else {
    spdlog::info("{}: the lookup of key '{}' says it {}", spec_.name, key,
                 found.outcome == Reconciled::Outcome::kHappened ? "happened" : "did not happen");
  }
  return found;
}

Reconciled CommandTool::Reconcile(const Json& arguments, const Json& meta) {
  if (!IsWrite(spec_.effect) || !ledger_) return Reconciled{};
  const auto [key, problem] = CallKeyOf(meta, arguments);
  if (key.empty() || !problem.empty()) return Reconciled{};
  const auto row = ledger_->Borrow().ledger().Lookup(spec_.name, key);
  if (std::optional<Reconciled> stored = StoredOutcome(row)) return *stored;
  Reconciled found = LookupKey(key);
  // The claim's command may still run (its keel died): "did not happen" is not yet true.
  if (found.outcome == Reconciled::Outcome::kDidNotHappen && row && !AttemptOver(*row)) {
    spdlog::info("{}: key '{}' may still be written: the command started under it may run",
                 spec_.name, key);
    return Reconciled{};
  }
  return found;
}

size_t CommandTool::ReconcileAtStartup(const std::string& self) {
  if (!command_.lookup || !ledger_ || !IsWrite(spec_.effect)) return 0;
  return ReconcileUnsettled(*ledger_, spec_.name, self,
                            [this](const std::string& key) { return LookupKey(key); });
}

}  // namespace keel
