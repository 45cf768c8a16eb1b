#include "server/app/serve_exit.h"

#include <cstdlib>
#include <utility>

#include <spdlog/spdlog.h>

#include "server/runtime/process_runner.h"

namespace keel {

int FinishServing(ExitParts parts) {
  if (!parts.peer_gone) {
    const TimePoint deadline = parts.clock.Now() + kExitFlush;
    for (Transport* transport : parts.transports) transport->FlushBlocking(deadline);
  }
  parts.task_store.reset();  // every decided task write reaches the file
  const bool idle = parts.pool.WaitIdle(parts.clock.Now() + kExitWorkers);
  const auto& stats = parts.stats;
  spdlog::info(
      "exiting; {} timeout(s), {} late result(s) and {} late progress dropped, {} "
      "cancel(s) ignored, {} call(s) settled before starting, {} slot(s) held",
      stats.timeouts, stats.late_results_dropped, stats.late_progress_dropped,
      stats.ignored_cancels, stats.never_started, stats.held);
  spdlog::default_logger()->flush();
  // A command still running (its call was cancelled, but its kill grace is not over) must
  // not outlive keel.
  if (parts.stop_upstream) parts.stop_upstream();
  if (const size_t killed = KillRunningProcessGroups(); killed > 0) {
    spdlog::info("killed {} command process group(s) still running at exit", killed);
  }
  if (idle) return 0;
  // Joining a thread that still runs tool code could hang forever.
  for (const std::string& warning :
       UnfinishedWorkWarnings(parts.pool.held(), parts.pool.pending(), parts.peer_gone)) {
    spdlog::warn("{}", warning);
  }
  spdlog::default_logger()->flush();
  std::_Exit(0);
}

std::vector<std::string> UnfinishedWorkWarnings(size_t held, size_t pending, bool peer_gone) {
  // Say why it runs: a call settled (cancelled, timed out, shut down) whose tool ignored its
  // token, or work still running when stdout closed (its calls were cancelled then, and keel
  // stops at once, without waiting for them to notice).
  std::vector<std::string> warnings;
  if (held > 0) {
    warnings.push_back(std::to_string(held) +
                       " tool call(s) did not stop after cancellation; not waiting for them");
  }
  if (pending > held) {
    warnings.push_back(
        std::to_string(pending - held) + " job(s) still running" +
        (peer_gone ? " when the client closed stdout (cancelled, not stopped yet)" : "") +
        "; not waiting for them");
  }
  return warnings;
}

}  // namespace keel
