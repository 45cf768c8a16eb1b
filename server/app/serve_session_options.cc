#include "server/app/serve_session_options.h"

#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

#include "ledger/kill_switch.h"
#include "server/app/process_identity.h"
#include "server/durable/state_keys.h"
#include "server/session/client_log.h"

namespace keel {
namespace {

// A tasks/cancel answered by another keel on the same --db reaches the work here within
// about this long (task_manager.h, invariant 10): one indexed read per interval while a
// task runs, none otherwise.
constexpr int64_t kTaskCancelWatchMs = 250;

// On a database shared across machines the kill switch is read at most this often per
// process (a round trip to the server saved on most write calls); DIST-2 asks that a switch
// set through any instance reach all within one second. On SQLite it is read at every
// write call: a local read. keel's in-database mutations do not use this read at all: they
// decide the switch inside their write transaction (ToolSpec::kill_switch_in_transaction).
constexpr auto kKillSwitchFresh = std::chrono::milliseconds(250);

// The last kill-switch read, shared by the workers.
struct CachedKillSwitch {
  std::mutex mu;
  bool read = false;  // guarded by mu, as the two below
  std::chrono::steady_clock::time_point read_at;
  KillSwitchState state;
};

}  // namespace

SessionOptions SessionOptionsFor(const CliOptions& flags, const std::string& owner,
                                 std::shared_ptr<LedgerService> ledger, TraceLog* trace) {
  SessionOptions session_options;
  session_options.max_inflight = flags.max_inflight;
  session_options.max_inflight_per_client = flags.max_inflight_per_client;
  session_options.page_size = flags.page_size;
  session_options.cache = CacheHints{flags.cache_ttl_ms, flags.cache_scope};
  session_options.shutdown_grace = Millis(flags.shutdown_grace_ms);
  session_options.call_limits.idle = Millis(flags.idle_timeout_ms);
  session_options.call_limits.max = Millis(flags.max_timeout_ms);
  session_options.shadow = flags.shadow;
  session_options.correlation_prefix = CorrelationPrefix();
  session_options.max_line_bytes = flags.max_line_bytes;
  session_options.server_version = KEEL_VERSION;
  session_options.tasks.max_tasks = flags.max_tasks;
  session_options.tasks.max_ttl_ms = flags.task_max_ttl_ms;
  session_options.tasks.poll_interval_ms = flags.task_poll_interval_ms;
  session_options.task_after = Millis(flags.task_after_ms);
  session_options.tasks.page_size = flags.page_size;
  session_options.tasks.owner = owner;
  session_options.tasks.pid = getpid();
  // Another keel on the same --db may answer a tasks/cancel for a task run here.
  session_options.tasks.cancel_watch_ms = kTaskCancelWatchMs;
  try {
    session_options.state_keys =
        LoadStateKeys(ledger->Borrow().db(), WallClockMs(), kStateKeyRotationMs);
  } catch (const SqliteError& e) {
    // States then open only in this process: a retry after a restart is asked again.
    spdlog::warn("request-state keys not stored in the database ({}); using this run's own",
                 e.what());
  }
  if (ledger->spans_machines()) {
    session_options.writes_blocked = [ledger = std::move(ledger),
                                      cache = std::make_shared<CachedKillSwitch>()] {
      const auto now = std::chrono::steady_clock::now();
      {
        std::lock_guard<std::mutex> lock(cache->mu);
        if (cache->read && now - cache->read_at < kKillSwitchFresh) return cache->state;
      }
      KillSwitchState state = ReadKillSwitch(ledger->Borrow().db());
      std::lock_guard<std::mutex> lock(cache->mu);
      cache->read = true;
      cache->read_at = now;
      cache->state = state;
      return state;
    };
  } else {
    session_options.writes_blocked = [ledger = std::move(ledger)] {
      return ReadKillSwitch(ledger->Borrow().db());
    };
  }
  session_options.trace = trace;
  session_options.trace_arguments = flags.trace_arguments;
  if (!flags.client_log_level.empty()) {
    session_options.client_log_level = ParseLoggingLevel(flags.client_log_level);
  }
  return session_options;
}

}  // namespace keel
