// RunProcess: runs one child process to completion, for command-backed tools (CAN-2, IDEM-5).
//
// What it does:
//  1. argv is executed directly, never through a shell. If argv[0] contains no '/', it is
//     looked up in keel's own PATH (posix_spawnp); otherwise it is used as given.
//  2. The child runs in a new process group whose id is its pid. Its fds are: 0 = a pipe fed
//     with spec.stdin_data then closed, 1 = stdout pipe, 2 = stderr pipe, 3 = the write end of
//     the "progress" pipe. Every other fd of keel is closed in the child (closefrom(4)), so
//     the protocol fd and database fds are never inherited. The environment is exactly
//     spec.env; the signal mask is empty and every signal disposition is the default.
//  3. stdout, stderr and progress are read with poll(); nothing blocks on a full pipe.
//     Bytes beyond max_output_bytes (per stream) are read and discarded, and the stream is
//     marked truncated. Each complete progress line (without its '\n') is passed to
//     on_progress_line on the calling thread; a progress line is capped at
//     max_output_bytes too (the rest of it is dropped); an unterminated last line is not
//     delivered. on_progress_line must not throw: an exception would leave the child
//     running and unreaped.
//  4. On cancellation (kCancelled) or when `deadline` passes (kTimedOut): SIGTERM to the
//     whole group, then SIGKILL to the group once kill_grace has passed, unless everything
//     (the direct child and every holder of the pipes) is gone by then.
//  5. When the direct child has exited, the group is SIGKILLed before the child is reaped
//     (in the normal case right away): background processes it left behind are not part of
//     the command's contract, and one holding stdout open would otherwise keep us reading
//     forever. Killing while the child is still an unreaped zombie means its pid, hence the
//     group id, cannot have been reused. The child is always reaped: no zombie is left.
//  6. After the group is SIGKILLed the pipes are still read to end of file, whatever
//     kill_grace is (0 included), for at most max(kill_grace, kMinDrain): everything the
//     child wrote before it exited is in the pipes and arrives (up to the cap). Only a holder
//     that left the group can keep a pipe open that long; when the time is up, what the pipes
//     hold at that moment is still read, once, and the run ends.
//  7. spec.on_spawned, if set, is called on the calling thread with the child's pid (= its
//     process group id) right after the spawn, before anything is read; the child is not
//     reaped before RunProcess returns, so the pid names it all along. It must not throw,
//     and should be quick: nothing is read, fed or enforced (deadline, cancel) meanwhile.
//
// Pieces: SpawnChild (process_spawn.h) starts the child as items 1-2 say; ProcessSupervisor
// (process_supervisor.h) decides items 4-6 from what happened and the time; StreamCapture
// (stream_capture.h) keeps item 3's bounded output; RunProcess is the poll loop around them.
//
// Why posix_spawn and not fork+exec: glibc's posix_spawn (2.36) does everything needed —
// dup2, chdir (addchdir_np), closefrom (addclosefrom_np, close_range underneath), new
// process group, signal reset — in a vfork-like child that runs no code of ours, so nothing
// async-signal-unsafe can happen between fork and exec in a multi-threaded keel, and exec
// failures come back as the return value (a clear spawn_error) without a hand-made error pipe.
//
// Thread-safety: may be called concurrently from several threads. No global state: every
// pipe is created close-on-exec (so a concurrent spawn never inherits another's pipes), the
// child is waited for by pid (waitid on that pid; a pidfd wakes poll when it exits, with a
// short poll interval as fallback if pidfd_open is unavailable). SIGCHLD is not used.
//
// Children do not die with keel when keel itself is SIGKILLed: no PR_SET_PDEATHSIG. The
// death signal can only be asked for by the child, between fork and exec, and posix_spawn
// runs no code of ours there; getting it would take fork+exec by hand (what the paragraph
// above avoids) or a trampoline exec of keel before every command. And it would only help in
// part: it reaches the direct child, not the rest of its group (a shell's background job
// runs on), and it fires when the spawning *thread* exits — sound here only because that
// thread waits in RunProcess until the child is reaped, a property a worker pool that
// replaces threads must keep. So an orphaned command is expected, and what keeps a keyed
// write from running twice is the ledger's rule, which holds without any help from signals:
// the claim records the run (on_spawned -> MutationLedger::RecordAttempt) and a later keel
// releases the key only once that run is known to be over (process_attempt.h,
// remote_write.h). keel's own exit paths do kill the groups (KillRunningProcessGroups).
//
// Limitations: a descendant that leaves the process group (setsid/setpgid) escapes the group
// kill and, if it holds a pipe, the run still ends at the deadline/cancellation (its pipes
// are then abandoned). kCancelled/kTimedOut are decided by what asked the child to stop,
// even if it would have exited on its own just then (cancellation is racy by nature).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "server/runtime/cancellation.h"
#include "server/runtime/clock.h"
#include "server/runtime/process_supervisor.h"  // kMinDrain

namespace keel {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the program; must not be empty
  std::string cwd;                // empty: keel's own working directory
  std::vector<std::string> env;   // "K=V", the complete environment of the child
  std::string stdin_data;
  size_t max_output_bytes = 1 << 20;  // per stream: bounds keel's memory for a chatty command
  Duration kill_grace = Millis(2000);
  std::function<void(pid_t pid)> on_spawned;  // see 7; null: nothing to tell
};

struct ProcessResult {
  enum class End { kExited, kSignaled, kCancelled, kTimedOut, kSpawnFailed };
  End end = End::kSpawnFailed;
  int exit_code = -1;  // kExited (or a stopped child that exited anyway): its exit status
  int signal = 0;      // kSignaled, kCancelled, kTimedOut: the signal that ended it, if any
  std::string stdout_data;
  bool stdout_truncated = false;
  std::string stderr_data;  // capped like stdout
  bool stderr_truncated = false;
  std::string spawn_error;  // kSpawnFailed only
  Duration elapsed{};
};

ProcessResult RunProcess(const ProcessSpec& spec, const CancellationToken& token,
                         TimePoint deadline,
                         const std::function<void(std::string_view line)>& on_progress_line);

// For keel's exit path: SIGKILLs the process group of every RunProcess still running (a
// worker that keel will not wait for would otherwise leave its child behind). The runs then
// end as their children die. Returns how many groups were signalled. Thread-safe.
size_t KillRunningProcessGroups();

}  // namespace keel
