#include "server/app/operator_commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "ledger/database.h"
#include "ledger/instance_registry.h"
#include "ledger/kill_switch.h"
#include "protocol/iso_time.h"
#include "server/app/catalog_check.h"
#include "server/app/exit_codes.h"
#include "server/durable/ledger_service.h"
#include "server/durable/policy_store.h"
#include "server/policy/policy_loader.h"
#include "server/runtime/clock.h"
#include "server/trace/trace_model.h"
#include "server/trace/trace_report.h"
#include "server/trace/trace_summary.h"

namespace keel {
namespace {

// The --db file for an operator command (opened and migrated). Null after writing why to
// `err`, with *exit_code set (73 cannot create, 78 newer schema).
std::shared_ptr<LedgerService> OpenForCommand(const CliOptions& flags, std::ostream& err,
                                              std::string* path, int* exit_code) {
  std::string error;
  *path = flags.db_path.empty() ? DefaultDatabasePath(&error) : flags.db_path;
  *exit_code = kExitCantCreate;
  std::shared_ptr<LedgerService> ledger;
  if (!path->empty()) {
    ledger = LedgerService::Open({*path, flags.idempotency_ttl_ms, "admin"}, &error, exit_code);
  }
  if (!ledger) err << "keel: " << error << "\n";
  return ledger;
}

// `keel admin block-writes on|off|status`: flips or shows the persisted kill switch for
// writes (OPS-2) in the --db file, for a keel running on it to see on its next write call.
CommandOutcome RunAdminBlockWrites(const CliOptions& flags, std::ostream& err) {
  std::string path;
  int exit_code = 0;
  std::shared_ptr<LedgerService> ledger = OpenForCommand(flags, err, &path, &exit_code);
  if (!ledger) return {exit_code, ""};
  try {
    const LedgerService::Lease lease = ledger->Borrow();
    if (flags.admin_block_writes != "status") {
      const bool on = flags.admin_block_writes == "on";
      SetWritesBlocked(lease.db(), on, WallClockMs(),
                       "keel admin block-writes " + flags.admin_block_writes + " (pid " +
                           std::to_string(getpid()) + ")");
    }
    const KillSwitchState state = ReadKillSwitch(lease.db());
    std::string line = std::string("writes ") + (state.blocked ? "blocked" : "allowed") + " in " +
                       Database::Describe(path);
    if (state.updated_ms > 0) {
      line += " (set " + IsoTime(state.updated_ms) + " by " + state.updated_by + ")";
    }
    return {0, line + "\n"};
  } catch (const std::exception& e) {
    err << "keel: " << Database::Describe(path) << ": " << e.what() << "\n";
    return {kExitCantCreate, ""};
  }
}

// `keel admin instances`: the keels registered on a PostgreSQL --db (DIST-2), each live or
// gone by the server's clock; on SQLite, says the registry is PostgreSQL's only.
CommandOutcome RunAdminInstances(const CliOptions& flags, std::ostream& err) {
  std::string path;
  int exit_code = 0;
  std::shared_ptr<LedgerService> ledger = OpenForCommand(flags, err, &path, &exit_code);
  if (!ledger) return {exit_code, ""};
  if (!ledger->spans_machines()) {
    return {0, "no registry of instances in " + Database::Describe(path) +
                   ": keels on one SQLite file share a machine and tell each other apart by "
                   "pid\n"};
  }
  try {
    const LedgerService::Lease lease = ledger->Borrow();
    InstanceRegistry registry(lease.db());
    const int64_t now = lease.db().ClockMs();
    std::string out;
    size_t live = 0;
    const std::vector<InstanceInfo> all = registry.List();
    for (const InstanceInfo& info : all) {
      const int64_t silent = now - info.heartbeat_ms;
      const bool gone = silent > InstanceRegistry::kGoneAfterMs;
      if (!gone) ++live;
      out += (gone ? "gone  " : "live  ") + info.owner + "  host " + info.host + "  pid " +
             std::to_string(info.pid) + "  since " + IsoTime(info.started_ms) +
             "  last heartbeat " + std::to_string(silent / 1000) + " s ago\n";
    }
    return {0, std::to_string(live) + " live of " + std::to_string(all.size()) +
                   " registered keel(s) in " + Database::Describe(path) + "\n" + out};
  } catch (const std::exception& e) {
    err << "keel: " << Database::Describe(path) << ": " << e.what() << "\n";
    return {kExitUnavailable, ""};
  }
}

// `keel policy check FILE`: validates a file, listing every problem.
CommandOutcome RunPolicyCheck(const CliOptions& flags, std::ostream& err) {
  const LoadedPolicy loaded = LoadPolicyFile(flags.policy_check_file);
  for (const std::string& problem : loaded.problems) err << "keel: policy: " << problem << "\n";
  if (!loaded.policy) return {loaded.unreadable ? kExitNoInput : kExitConfig, ""};
  return {0, "policy " + flags.policy_check_file + " is valid (version " + loaded.policy->version +
                 ")\n"};
}

// `keel policy show [--previous]`: prints what the keel on --db runs (or ran before).
CommandOutcome RunPolicyShow(const CliOptions& flags, std::ostream& err) {
  std::string path;
  int exit_code = 0;
  std::shared_ptr<LedgerService> ledger = OpenForCommand(flags, err, &path, &exit_code);
  if (!ledger) return {exit_code, ""};
  const std::optional<std::string> stored =
      StoredPolicy(ledger->Borrow().db(), flags.policy_previous);
  if (!stored) {
    err << "keel: no " << (flags.policy_previous ? "previous " : "") << "policy recorded in "
        << Database::Describe(path) << "\n";
    return {1, ""};
  }
  return {0, *stored + "\n"};
}

// `keel trace summary FILE` (OBS-2).
CommandOutcome RunTraceSummary(const CliOptions& flags) {
  std::ifstream in(flags.trace_summary_file);
  if (flags.trace_summary_json) return {0, SummarizeTraceJson(in).dump(2) + "\n"};
  return {0, SummarizeTrace(in)};
}

// `keel trace report FILE [-o OUT]` (ADO-4): the page goes to OUT (default FILE.html: next
// to the trace, never the trace itself), or to stdout for "-". 66 when FILE cannot be read,
// 73 when OUT cannot be written.
CommandOutcome RunTraceReport(const CliOptions& flags, std::ostream& err) {
  const std::string& path = flags.trace_report_file;
  std::error_code ec;
  std::ifstream in;
  if (!std::filesystem::is_directory(path, ec)) in.open(path, std::ios::binary);
  if (!in.is_open()) {
    err << "keel: cannot read the trace file " << path << ": "
        << (std::filesystem::is_directory(path, ec) ? "it is a directory"
                                                    : std::generic_category().message(errno))
        << "\n";
    return {kExitNoInput, ""};
  }
  const TraceModel model = ReadTraceModel(in);
  if (in.bad()) {
    err << "keel: cannot read the trace file " << path << "\n";
    return {kExitNoInput, ""};
  }
  std::string page = RenderTraceReport(model, ReportOptions{path});
  const std::string out_path =
      flags.trace_report_output.empty() ? path + ".html" : flags.trace_report_output;
  if (out_path == "-") return {0, std::move(page)};
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
  out.close();
  if (!out) {
    err << "keel: cannot write the report to " << out_path << ": "
        << std::generic_category().message(errno) << "\n";
    return {kExitCantCreate, ""};
  }
  std::string said = "wrote " + out_path + " (" + std::to_string(model.calls.size()) +
                     (model.calls.size() == 1 ? " call" : " calls");
  if (model.skipped > 0) said += ", " + std::to_string(model.skipped) + " lines skipped";
  return {0, said + "); open it in a browser, e.g. xdg-open " + out_path + "\n"};
}

}  // namespace

bool IsOperatorCommand(const CliOptions& flags) {
  return !flags.admin_block_writes.empty() || flags.admin_instances ||
         !flags.policy_command.empty() || !flags.trace_summary_file.empty() ||
         !flags.trace_report_file.empty() || !flags.catalog_check_file.empty();
}

CommandOutcome RunOperatorCommand(const CliOptions& flags, std::ostream& err) {
  if (!flags.admin_block_writes.empty()) return RunAdminBlockWrites(flags, err);
  if (flags.admin_instances) return RunAdminInstances(flags, err);
  if (flags.policy_command == "check") return RunPolicyCheck(flags, err);
  if (!flags.catalog_check_file.empty()) return RunCatalogCheck(flags, err);
  if (!flags.policy_command.empty()) return RunPolicyShow(flags, err);
  if (!flags.trace_report_file.empty()) return RunTraceReport(flags, err);
  return RunTraceSummary(flags);
}

int PrintCommandOutcome(const CommandOutcome& outcome) {
  // The one way an operator command reaches stdout (it carries no protocol here).
  if (!outcome.output.empty()) {
    std::fwrite(outcome.output.data(), 1, outcome.output.size(), stdout);
    std::fflush(stdout);
  }
  return outcome.exit_code;
}

}  // namespace keel
