// StdioUpstream: the wrapped MCP server as a child process, spoken to over its stdin and
// stdout (`keel wrap -- COMMAND ...`; WRAP-1, WRAP-3).
//
// What it does:
//  1. The command is spawned as SpawnChild does for command tools (process_spawn.h): argv,
//     no shell, its own process group (id = its pid), exactly `env`, no fd of keel's but its
//     pipes. keel never holds the child's ends.
//  2. One thread reads stdout and stderr and writes stdin, with poll(); nothing blocks.
//     stdout is framed into lines of at most max_line_bytes (the bound keel puts on a
//     client's lines); each line that is a JSON-RPC 2.0 object goes to on_message, anything
//     else (a log line, half a line, JSON that is not JSON-RPC, a line over the cap) is
//     dropped and logged (the first kMaxJunkLogged such lines, then one line per thousand).
//     stderr lines are logged at info with the prefix "[upstream] " (cut at 2000 bytes; at
//     most kMaxStderrPerSecond lines a second, the rest counted).
//  3. Send writes to the child's stdin itself when nothing is queued (never blocking: the
//     pipe is non-blocking); what the pipe does not take waits in a queue of at most
//     max_queued_bytes, written by the I/O thread in order: an upstream that stops reading
//     its stdin makes Send fail (never block, never grow without bound).
//  4. The connection ends when the child exits, closes its stdout (and still runs 200 ms
//     later: an exiting child's stdout closes a moment before its exit shows), or on
//     Shutdown. Then the whole process group is SIGKILLed before the child is reaped (a
//     grandchild that held stdout open, or a server that forked, does not outlive it), and
//     on_closed runs once.
//  5. Shutdown(grace): stdin is closed (end of file, MCP's stdio shutdown), then SIGTERM to
//     the group after a third of the grace, then SIGKILL to the group at the end of the
//     grace — so a server that ignores EOF and SIGTERM still dies.
//
// keel itself dying by SIGKILL leaves the child with end of file on its stdin only (the
// death signal would need fork+exec by hand: see process_runner.h).
// Thread-safety: Send from any thread; Shutdown from one thread (the owner), once.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "protocol/line_framer.h"
#include "server/runtime/fd.h"
#include "server/upstream/upstream_transport.h"

namespace keel {

inline constexpr int kMaxStderrPerSecond = 200;

struct UpstreamCommand {
  std::vector<std::string> argv;  // not empty
  std::vector<std::string> env;   // "K=V": the child's whole environment
  std::string cwd;                // empty: keel's
  size_t max_line_bytes = 16 << 20;
  size_t max_queued_bytes = 8 << 20;
};

class StdioUpstream final : public UpstreamTransport {
 public:
  // Null, with *error, when the command cannot be spawned.
  static std::unique_ptr<StdioUpstream> Start(const UpstreamCommand& command, UpstreamEvents events,
                                              std::string* error);
  ~StdioUpstream() override;

  bool Send(const Json& message, std::string* why) override;
  void Shutdown(Duration grace) override;
  pid_t pid() const { return pid_; }

 private:
  StdioUpstream(const UpstreamCommand& command, UpstreamEvents events);
  struct RunState;
  void Run();
  void Advance(RunState& state, TimePoint now);
  void PollOnce(RunState& state, LineFramer& out, LineFramer& err, TimePoint now);
  void ReadStream(Fd& fd, LineFramer& framer, bool& open);
  void WriteQueued();
  void Wake();
  void OnStdoutLine(std::string_view line);
  void OnStderrLine(std::string_view line);

  const UpstreamCommand command_;
  UpstreamEvents events_;
  pid_t pid_ = -1;
  Fd stdin_;  // guarded by mu_: Send writes it, the I/O thread writes and closes it
  Fd stdout_;
  Fd stderr_;
  Fd pidfd_;
  Fd wake_;  // eventfd

  std::mutex mu_;
  std::string queued_;     // guarded by mu_: bytes not yet written to stdin
  bool closed_ = false;    // guarded by mu_: no more sends
  bool stopping_ = false;  // guarded by mu_: Shutdown asked
  Duration grace_{};       // guarded by mu_
  std::atomic<bool> joined_{false};
  size_t junk_lines_ = 0;  // I/O thread
  int64_t stderr_second_ = 0;
  int stderr_in_second_ = 0;
  size_t stderr_dropped_ = 0;
  std::thread thread_;
};

}  // namespace keel
