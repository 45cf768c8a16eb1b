// keel's entry point: flags and wiring only. The rules live in the pieces wired here.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "ledger/kill_switch.h"
#include "server/catalog/catalog_binding.h"
#include "server/app/cli_options.h"
#include "server/runtime/event_loop.h"
#include "server/app/exit_codes.h"
#include "server/app/operator_commands.h"
#include "server/catalog/effective_policy.h"
#include "server/durable/policy_store.h"
#include "server/policy/policy_loader.h"
#include "server/durable/ledger_service.h"
#include "server/app/process_log.h"
#include "server/runtime/process_runner.h"
#include "server/session/session.h"
#include "server/transport/stdio_fd.h"
#include "server/transport/stdio_transport.h"
#include "server/tasks/task_recovery.h"
#include "server/tasks/task_store_thread.h"
#include "server/catalog/tool_registry.h"
#include "server/trace/trace_log.h"
#include "server/tools/command_tool.h"
#include "server/tools/conformance_tools.h"
#include "server/tools/deployment_tools.h"
#include "server/tools/echo_tool.h"
#include "server/tools/ledger_tools.h"
#include "server/tools/test_tools.h"
#include "server/runtime/worker_pool.h"

namespace {

using keel::kExitCantCreate;
using keel::kExitConfig;
using keel::kExitSoftware;

int signal_pipe[2] = {-1, -1};

void OnSignal(int signo) {
  const char byte = static_cast<char>(signo);
  [[maybe_unused]] ssize_t n = write(signal_pipe[1], &byte, 1);
}

// Moves the protocol streams to private fds: fd 1 then points at stderr and fd 0 at
// /dev/null, so no stray write from a library or child process can corrupt the stream
// and no child can steal input. The private fds never block and leave the inherited
// ones' flags alone (StdioFd). Returns false if the fds cannot be moved.
bool TakeProtocolFds(keel::StdioFd* in, keel::StdioFd* out) {
  *in = keel::TakeStdio(STDIN_FILENO, O_RDONLY);
  *out = keel::TakeStdio(STDOUT_FILENO, O_WRONLY);
  if (in->fd < 0 || out->fd < 0) return false;
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    return false;
  }
  close(devnull);
  return true;
}

bool InstallSignalHandlers() {
  if (pipe2(signal_pipe, O_NONBLOCK | O_CLOEXEC) != 0) return false;
  signal(SIGPIPE, SIG_IGN);  // a closed stdout shows up as EPIPE instead of killing us
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  return sigaction(SIGTERM, &action, nullptr) == 0 && sigaction(SIGINT, &action, nullptr) == 0 &&
         sigaction(SIGHUP, &action, nullptr) == 0;
}

// Correlation ids are "<prefix>-<n>": a prefix random per process keeps them unique
// across restarts, so one found in a host's log names one call.
std::string CorrelationPrefix() {
  std::random_device random;
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "k%08x", static_cast<unsigned>(random()));
  return prefix;
}

// Everything from flags to exit; main() only turns an escaped exception into exit 70.
int RunKeel(int argc, char** argv) {
  keel::InstallStderrLogger();  // spdlog's default logger writes to stdout: replace it first
  const keel::CliParse cli = keel::ParseCommandLine(argc, argv);
  if (cli.exit_code) return *cli.exit_code;
  const keel::CliOptions& flags = cli.options;
  if (keel::IsOperatorCommand(flags)) {
    return keel::PrintCommandOutcome(keel::RunOperatorCommand(flags, std::cerr));
  }
  // The policy is validated completely before anything else starts (BUD-1).
  // Without a file: the built-in policy, with --idle-timeout and --max-timeout as defaults.
  keel::PolicyHandle policy = std::make_shared<const keel::Policy>(
      keel::BuiltinPolicyWithTimeouts(flags.idle_timeout_ms, flags.max_timeout_ms));
  if (!flags.policy_file.empty()) {
    keel::LoadedPolicy loaded = keel::LoadPolicyFile(flags.policy_file);
    for (const std::string& problem : loaded.problems) std::cerr << "keel: policy: " << problem << "\n";
    if (!loaded.policy) return kExitConfig;
    policy = std::move(loaded.policy);
  }
  // So is the tool catalog (--catalog, or the built-in demo catalog).
  keel::CatalogLoad catalog = keel::LoadCatalogFile(flags.catalog_file);
  for (const std::string& problem : catalog.problems) std::cerr << "keel: catalog: " << problem << "\n";
  if (!catalog.ok()) return kExitConfig;

  if (const std::string error = keel::ConfigureProcessLog(flags.log_level, flags.log_file);
      !error.empty()) {
    std::cerr << "keel: cannot open log file " << flags.log_file << ": " << error << "\n";
    return kExitCantCreate;
  }
  keel::StdioFd in;
  keel::StdioFd out;
  if (!TakeProtocolFds(&in, &out) || !InstallSignalHandlers()) {
    spdlog::critical("cannot set up stdio: {}", std::strerror(errno));
    return kExitSoftware;
  }

  // The durable state is opened before serving: a database keel cannot use is a clear
  // start-up error (73 cannot create, 78 written by a newer keel), never a failing call.
  std::string db_error;
  const std::string db_path =
      flags.db_path.empty() ? keel::DefaultDatabasePath(&db_error) : flags.db_path;
  int exit_code = kExitCantCreate;
  std::shared_ptr<keel::LedgerService> ledger;
  const std::string owner = "keel-" + std::to_string(getpid()) + "-" + CorrelationPrefix();
  if (!db_path.empty()) {
    keel::LedgerService::Options ledger_options;
    ledger_options.path = db_path;
    ledger_options.ttl_ms = flags.idempotency_ttl_ms;
    ledger_options.owner = owner;
    ledger = keel::LedgerService::Open(ledger_options, &db_error, &exit_code);
  }
  if (!ledger) {
    std::cerr << "keel: " << db_error << "\n";
    return exit_code;
  }
  if (flags.block_writes) {
    try {
      keel::SetWritesBlocked(ledger->Db(), true, keel::WallClockMs(),
                             "--block-writes at start-up (pid " + std::to_string(getpid()) + ")");
    } catch (const std::exception& e) {
      std::cerr << "keel: cannot turn the kill switch on in " << db_path << ": " << e.what() << "\n";
      return kExitCantCreate;
    }
  }
  try {
    keel::RecordPolicy(ledger->Db(), *policy, keel::WallClockMs(),
                       "keel start-up (pid " + std::to_string(getpid()) + ")");
  } catch (const std::exception& e) {
    spdlog::warn("could not record the policy in {}: {}", db_path, e.what());
  }
  if (keel::WritesBlocked(ledger->Db())) {
    spdlog::warn("the kill switch is on: write tools answer 'kill_switch' until `keel admin "
                 "block-writes off`");
  }

  keel::ToolRegistry registry;
  std::vector<std::unique_ptr<keel::Tool>> implementations;
  implementations.push_back(keel::MakeEchoTool());
  // Test-only: KEEL_TEST_CRASH_AT makes a mutation kill keel at one step (crash tests).
  const char* crash_at = flags.test_tools ? std::getenv("KEEL_TEST_CRASH_AT") : nullptr;
  for (auto& tool : keel::MakeLedgerTools(ledger, crash_at ? crash_at : "")) {
    implementations.push_back(std::move(tool));
  }
  std::string fault_error;
  const auto fault_specs = keel::ParseFaults(flags.faults, keel::DeploymentToolNames(), &fault_error);
  if (!fault_specs) {
    std::cerr << "keel: " << fault_error << "\n";
    return kExitConfig;
  }
  auto faults = std::make_shared<keel::FaultPlan>(*fault_specs);
  if (!faults->empty()) spdlog::warn("fault injection on: {}", faults->Describe());
  for (auto& tool : keel::MakeDeploymentTools(ledger, faults)) {
    implementations.push_back(std::move(tool));
  }
  std::set<std::string> test_tool_names;
  if (flags.test_tools) {
    for (auto& tool : keel::MakeTestTools()) {
      test_tool_names.insert(tool->spec().name);
      implementations.push_back(std::move(tool));
    }
  }
  if (flags.conformance_fixtures) {
    for (auto& tool : keel::MakeConformanceTools()) {
      test_tool_names.insert(tool->spec().name);
      implementations.push_back(std::move(tool));
    }
  }
  // Command-backed tools (issue 8): catalog entries with `run`.
  std::vector<keel::CommandTool*> command_tools;
  auto make_command = [&](keel::ToolSpec spec, const keel::CommandSpec& command) {
    auto tool = std::make_unique<keel::CommandTool>(std::move(spec), command, ledger);
    command_tools.push_back(tool.get());
    return std::unique_ptr<keel::Tool>(std::move(tool));
  };
  keel::BoundCatalog bound =
      keel::BindCatalog(*catalog.catalog, std::move(implementations), make_command);
  for (const std::string& problem : bound.problems) std::cerr << "keel: catalog: " << problem << "\n";
  if (!bound.problems.empty()) return kExitConfig;
  // The catalog's tools, then (with --test-tools, --conformance-fixtures) the test tools and
  // fixtures it does not describe.
  std::vector<std::unique_ptr<keel::Tool>> tools = std::move(bound.tools);
  for (auto& tool : bound.unbound) {
    if (test_tool_names.count(tool->spec().name) != 0) tools.push_back(std::move(tool));
  }
  for (auto& tool : tools) {
    if (const std::string error = registry.Register(std::move(tool)); !error.empty()) {
      spdlog::critical("invalid tool catalog: {}", error);
      return kExitSoftware;
    }
  }

  std::unique_ptr<keel::TraceLog> trace;
  if (!flags.trace_file.empty()) {
    std::string trace_error;
    trace = keel::TraceLog::Open(flags.trace_file,
                                 {{"service.name", "keel"},
                                  {"service.version", KEEL_VERSION},
                                  {"process.pid", getpid()}},
                                 &trace_error);
    if (!trace) {
      std::cerr << "keel: cannot open --trace-file " << flags.trace_file << ": " << trace_error << "\n";
      return kExitCantCreate;
    }
  }

  keel::SteadyClock clock;
  keel::EventLoop loop(clock);
  // Durable tasks are read and written on their own thread (declared after the loop it
  // posts answers to, so it is drained and joined before the loop goes away).
  std::unique_ptr<keel::TaskStoreThread> task_store = keel::TaskStoreThread::Start(db_path, &db_error);
  if (!task_store) {
    std::cerr << "keel: cannot open " << db_path << " for tasks: " << db_error << "\n";
    return kExitCantCreate;
  }
  // Replacement threads for slots held by tools that ignore cancellation: at most one per
  // admissible call.
  keel::WorkerPool pool(flags.workers, flags.max_inflight);
  keel::SessionOptions session_options;
  session_options.max_inflight = flags.max_inflight;
  session_options.page_size = flags.page_size;
  session_options.shutdown_grace = keel::Millis(flags.shutdown_grace_ms);
  session_options.call_limits.idle = keel::Millis(flags.idle_timeout_ms);
  session_options.call_limits.max = keel::Millis(flags.max_timeout_ms);
  session_options.shadow = flags.shadow;
  session_options.correlation_prefix = CorrelationPrefix();
  session_options.max_line_bytes = flags.max_line_bytes;
  session_options.server_version = KEEL_VERSION;
  session_options.tasks.max_tasks = flags.max_tasks;
  session_options.tasks.max_ttl_ms = flags.task_max_ttl_ms;
  session_options.tasks.poll_interval_ms = flags.task_poll_interval_ms;
  session_options.tasks.page_size = flags.page_size;
  session_options.tasks.owner = owner;
  session_options.tasks.pid = getpid();
  session_options.writes_blocked = [ledger] { return keel::WritesBlocked(ledger->Db()); };
  session_options.trace = trace.get();
  session_options.trace_arguments = flags.trace_arguments;
  if (!flags.client_log_level.empty()) {
    session_options.client_log_level = keel::ParseLogLevel(flags.client_log_level);
  }

  keel::Session* session = nullptr;
  bool peer_gone = false;
  keel::StdioTransport transport(
      loop, in, out, flags.max_line_bytes, flags.outbox_bytes,
      {.on_line = [&](std::string_view line) { session->HandleLine(line); },
       .on_oversized = [&](size_t bytes) { session->HandleOversizedLine(bytes); },
       .on_eof = [&] { session->BeginShutdown("stdin closed"); },
       .on_peer_gone =
           [&] {
             // Nobody reads stdout any more: nothing we write can arrive, so stop now.
             peer_gone = true;
             spdlog::info("stdout closed by the client; exiting");
             loop.Stop();
           },
       .on_progress_dropped = [&](uint64_t stream) { session->OnProgressDropped(stream); }});
  keel::Session session_object(loop, transport, registry, pool, session_options, task_store.get());
  session = &session_object;
  // Tasks a dead keel left working are settled before any request is read (the store
  // thread runs jobs in order), then every minute with the sweep of expired tasks.
  keel::RecoveryOptions recovery{owner, getpid(), nullptr};
  session->tasks()->StartMaintenance([&registry, recovery](keel::TaskStore& store) {
    try {
      keel::RecoverOrphanedTasks(store, registry, recovery, keel::WallClockMs());
    } catch (const std::exception& e) {
      spdlog::warn("tasks: recovering orphaned tasks failed: {}", e.what());
    }
  });
  session->set_on_stop_reading([&] { transport.StopReading(); });
  session->SetPolicy(policy);
  // SIGHUP: the policy file is read and validated again; only a valid one replaces the
  // running version (which is then kept as the previous one).
  auto reload_policy = [&] {
    if (flags.policy_file.empty()) {
      spdlog::info("SIGHUP: no --policy file to reload");
      return;
    }
    keel::LoadedPolicy loaded = keel::LoadPolicyFile(flags.policy_file);
    if (!loaded.policy) {
      spdlog::error("SIGHUP: {} is invalid; keeping policy version {}", flags.policy_file,
                    session->policy()->version);
      for (const std::string& problem : loaded.problems) spdlog::error("policy: {}", problem);
      return;
    }
    spdlog::info("SIGHUP: policy version {} replaces {}", loaded.policy->version,
                 session->policy()->version);
    session->SetPolicy(loaded.policy);
    pool.Submit([ledger, next = loaded.policy] {
      try {
        keel::RecordPolicy(ledger->Db(), *next, keel::WallClockMs(), "SIGHUP reload");
      } catch (const std::exception& e) {
        spdlog::warn("could not record the reloaded policy: {}", e.what());
      }
    });
  };
  session->set_on_finished([&] { loop.Stop(); });

  // Finished keys past --idempotency-ttl are forgotten: once now, then every 10 minutes,
  // on a worker (a write transaction must never block the loop).
  auto reap = [ledger] {
    try {
      if (const size_t n = ledger->Ledger().ReapExpired(); n > 0) {
        spdlog::info("ledger: forgot {} expired key(s)", n);
      }
    } catch (const std::exception& e) {
      spdlog::warn("ledger: reaping expired keys failed: {}", e.what());
    }
  };
  reap();
  // Keyed command writes a dead keel left without an outcome are looked up by key (issue 8).
  if (!command_tools.empty()) {
    pool.Submit([&command_tools, owner] {
      for (keel::CommandTool* tool : command_tools) {
        try {
          const size_t settled = tool->ReconcileAtStartup(owner);
          if (settled > 0) {
            spdlog::info("{}: {} unsettled key(s) reconciled", tool->spec().name, settled);
          }
        } catch (const std::exception& e) {
          spdlog::warn("{}: start-up reconciliation failed: {}", tool->spec().name, e.what());
        }
      }
    });
  }
  std::function<void()> schedule_reap = [&] {
    loop.AddTimer(clock.Now() + keel::Millis(10 * 60 * 1000), [&] {
      pool.Submit(reap);
      schedule_reap();
    });
  };
  schedule_reap();

  int signals_seen = 0;
  loop.Watch(signal_pipe[0], POLLIN, [&](short) {
    char byte;
    while (read(signal_pipe[0], &byte, 1) == 1) {
      if (byte == SIGHUP) {
        reload_policy();
        continue;
      }
      // The first signal drains like EOF; a second one ends the grace at once.
      if (++signals_seen == 1) {
        session->BeginShutdown(byte == SIGINT ? "SIGINT" : "SIGTERM");
      } else {
        session->ShutdownNow();
      }
    }
  });

  spdlog::info("keel {} serving on stdio with {} workers, {} tools", KEEL_VERSION, pool.threads(),
               registry.tools().size());
  try {
    loop.Run();
  } catch (const std::exception& e) {
    // Only a broken invariant gets here (poll itself failed): say so and exit at once,
    // without joining workers that may be running tool code.
    spdlog::critical("internal error: {}", e.what());
    keel::KillRunningProcessGroups();
    spdlog::default_logger()->flush();
    std::_Exit(kExitSoftware);
  }

  // Exit path: hosts kill us 2 s after closing stdin, so every wait here is short.
  if (!peer_gone) transport.FlushBlocking(clock.Now() + keel::Millis(250));
  task_store.reset();  // every decided task write reaches the file
  const bool idle = pool.WaitIdle(clock.Now() + keel::Millis(100));
  const auto& stats = session->coordinator().stats();
  spdlog::info("exiting; {} timeout(s), {} late result(s) and {} late progress dropped, {} "
               "cancel(s) ignored, {} call(s) settled before starting, {} slot(s) held",
               stats.timeouts, stats.late_results_dropped, stats.late_progress_dropped,
               stats.ignored_cancels, stats.never_started, stats.held);
  spdlog::default_logger()->flush();
  // A command still running (its call was cancelled, but its kill grace is not over) must
  // not outlive keel.
  if (const size_t killed = keel::KillRunningProcessGroups(); killed > 0) {
    spdlog::info("killed {} command process group(s) still running at exit", killed);
  }
  if (!idle) {
    // Joining a thread that still runs tool code could hang forever. Say why it runs: a call
    // settled (cancelled, timed out, shut down) whose tool ignored its token, or work that
    // nothing cancelled (stdout closed: keel stops at once).
    const size_t held = pool.held();
    if (held > 0) {
      spdlog::warn("{} tool call(s) did not stop after cancellation; not waiting for them", held);
    }
    if (const size_t pending = pool.pending(); pending > held) {
      spdlog::warn("{} job(s) still running{}; not waiting for them", pending - held,
                   peer_gone ? " when the client closed stdout (nothing cancelled them)" : "");
    }
    spdlog::default_logger()->flush();
    std::_Exit(0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return RunKeel(argc, argv);
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return kExitSoftware;
  }
}
