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
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "server/app/cli_options.h"
#include "server/runtime/event_loop.h"
#include "server/app/durable_state.h"
#include "server/app/exit_codes.h"
#include "server/app/process_identity.h"
#include "server/app/serve_config.h"
#include "server/app/serve_session_options.h"
#include "server/app/tool_set.h"
#include "server/durable/policy_store.h"
#include "server/app/operator_commands.h"
#include "server/policy/policy_loader.h"
#include "server/durable/ledger_service.h"
#include "server/app/process_log.h"
#include "server/runtime/process_runner.h"
#include "server/session/session.h"
#include "server/transport/stdio_fd.h"
#include "server/transport/stdio_transport.h"
#include "server/tasks/task_recovery.h"
#include "server/tasks/task_store_thread.h"
#include "server/trace/trace_log.h"
#include "server/runtime/worker_pool.h"

namespace {

using keel::kExitCantCreate;
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

// Everything from flags to exit; main() only turns an escaped exception into exit 70.
int RunKeel(int argc, char** argv) {
  keel::InstallStderrLogger();  // spdlog's default logger writes to stdout: replace it first
  const keel::CliParse cli = keel::ParseCommandLine(argc, argv);
  if (cli.exit_code) return *cli.exit_code;
  const keel::CliOptions& flags = cli.options;
  if (keel::IsOperatorCommand(flags)) {
    return keel::PrintCommandOutcome(keel::RunOperatorCommand(flags, std::cerr));
  }
  // The policy and the catalog are validated completely before anything else starts (BUD-1).
  keel::ServeConfig config = keel::LoadServeConfig(flags, std::cerr);
  if (config.exit_code) return *config.exit_code;
  const keel::PolicyHandle& policy = config.policy;

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
  // start-up error, never a failing call.
  const std::string owner = keel::ProcessOwner();
  keel::DurableState durable = keel::OpenDurableState(flags, *policy, owner, std::cerr);
  if (durable.exit_code) return *durable.exit_code;
  const std::string& db_path = durable.db_path;
  const std::shared_ptr<keel::LedgerService>& ledger = durable.ledger;
  keel::ToolSet tool_set = keel::BuildToolSet(flags, *config.catalog, ledger, std::cerr);
  if (tool_set.exit_code) return *tool_set.exit_code;
  const keel::ToolRegistry& registry = tool_set.registry;
  const std::vector<keel::CommandTool*>& command_tools = tool_set.command_tools;

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
  std::string db_error;
  std::unique_ptr<keel::TaskStoreThread> task_store = keel::TaskStoreThread::Start(db_path, &db_error);
  if (!task_store) {
    std::cerr << "keel: cannot open " << db_path << " for tasks: " << db_error << "\n";
    return kExitCantCreate;
  }
  // Replacement threads for slots held by tools that ignore cancellation: at most one per
  // admissible call.
  keel::WorkerPool pool(flags.workers, flags.max_inflight);
  const keel::SessionOptions session_options =
      keel::SessionOptionsFor(flags, owner, ledger, trace.get());

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
