#include "server/upstream/stdio_upstream.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "protocol/bounded_json.h"
#include "protocol/line_framer.h"
#include "server/runtime/process_spawn.h"

namespace keel {
namespace {

// After the child exits, its pipes are read to end of file for at most this long.
constexpr Duration kDrain = Millis(200);
// A child's stdout reaches end of file a moment before its exit can be seen (the kernel
// closes an exiting process's files first): only a child still running this long after its
// stdout closed has closed it on purpose, and is ended for it.
constexpr Duration kExitAfterStdout = Millis(200);
// Without a pidfd, the child's exit is noticed by polling this often.
constexpr int kNoPidfdPollMs = 50;
// A stderr line longer than this is logged cut.
constexpr size_t kStderrLineLogged = 2000;
constexpr size_t kStderrLineMax = 64 * 1024;

std::string ExitText(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

bool ChildExited(pid_t pid) {
  siginfo_t info{};
  // WNOWAIT: the child stays a zombie, so its pid (the group id) is not reused while keel
  // may still signal the group.
  return ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace

StdioUpstream::StdioUpstream(const UpstreamCommand& command, UpstreamEvents events)
    : command_(command), events_(std::move(events)) {}

std::unique_ptr<StdioUpstream> StdioUpstream::Start(const UpstreamCommand& command,
                                                    UpstreamEvents events, std::string* error) {
  std::unique_ptr<StdioUpstream> upstream(new StdioUpstream(command, std::move(events)));
  ProcessSpec spec;
  spec.argv = command.argv;
  spec.env = command.env;
  spec.cwd = command.cwd;
  SpawnedChild child = SpawnChild(spec);
  if (child.pid < 0) {
    *error = child.error;
    return nullptr;
  }
  upstream->pid_ = child.pid;
  upstream->stdin_ = std::move(child.pipes.stdin_write);
  upstream->stdout_ = std::move(child.pipes.stdout_read);
  upstream->stderr_ = std::move(child.pipes.stderr_read);
  // fd 3 of the child (command tools' progress pipe) means nothing to an MCP server: keel's
  // end is closed here, with child.pipes.
  upstream->pidfd_ = Fd(static_cast<int>(::syscall(SYS_pidfd_open, child.pid, 0)));
  upstream->wake_ = Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  upstream->thread_ = std::thread([raw = upstream.get()] { raw->Run(); });
  return upstream;
}

StdioUpstream::~StdioUpstream() {
  if (thread_.joinable()) Shutdown(Duration::zero());
}

void StdioUpstream::Wake() {
  if (!wake_.open()) return;
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

bool StdioUpstream::Send(const Json& message, std::string* why) {
  std::string line = message.dump(-1, ' ', false, Json::error_handler_t::replace);
  line += '\n';
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) {
      *why = "the upstream connection is closed";
      return false;
    }
    if (queued_.size() + line.size() > command_.max_queued_bytes) {
      *why = "the upstream is not reading its input (" + std::to_string(queued_.size()) +
             " bytes wait for it)";
      return false;
    }
    if (queued_.empty() && stdin_.open()) {
      // Nothing waits before it: written here, on the caller's thread, the I/O thread is not
      // woken for it (a wake-up and a poll per forwarded call, measured by scripts/bench
      // --wrap). A pipe that is full, or takes part of it, leaves the rest to the I/O thread.
      const ssize_t n = ::write(stdin_.get(), line.data(), line.size());
      if (n == static_cast<ssize_t>(line.size())) return true;
      if (n > 0) line.erase(0, static_cast<size_t>(n));
      // n < 0: EAGAIN waits for POLLOUT; a closed pipe shows in the I/O thread's write.
    }
    queued_ += line;
  }
  Wake();
  return true;
}

void StdioUpstream::Shutdown(Duration grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    grace_ = grace;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
}

void StdioUpstream::OnStdoutLine(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  BoundedJson parsed = ParseBoundedJson(line);
  if (parsed.ok() && IsJsonRpcMessage(parsed.value)) {
    events_.on_message(std::move(parsed.value), Json());
    return;
  }
  ++junk_lines_;
  if (junk_lines_ <= kMaxJunkLogged || junk_lines_ % 1000 == 0) {
    spdlog::warn("upstream wrote a line on stdout that is not JSON-RPC (dropped, #{}): {:.200}",
                 junk_lines_, line);
  }
}

void StdioUpstream::OnStderrLine(std::string_view line) {
  const int64_t second = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
  if (second != stderr_second_) {
    if (stderr_dropped_ > 0) {
      spdlog::info("[upstream] ({} stderr lines not logged: more than {} a second)",
                   stderr_dropped_, kMaxStderrPerSecond);
    }
    stderr_second_ = second;
    stderr_in_second_ = 0;
    stderr_dropped_ = 0;
  }
  if (++stderr_in_second_ > kMaxStderrPerSecond) {
    ++stderr_dropped_;
    return;
  }
  spdlog::info("[upstream] {}", line.substr(0, kStderrLineLogged));
}

// What the I/O thread knows of the child and its streams.
struct StdioUpstream::RunState {
  bool out_open = false;
  bool err_open = false;
  bool exited = false;
  // The child may have exited since the last look: at first, when its pidfd was readable,
  // and on every wake without a pidfd. Only then is waitid asked (not on every message).
  bool may_have_exited = true;
  bool stop_started = false;
  std::string why;  // set when keel ended it for a reason of its own
  TimePoint term_at = TimePoint::max();
  TimePoint kill_at = TimePoint::max();
  TimePoint drain_until = TimePoint::max();
  TimePoint stdout_kill_at = TimePoint::max();  // stdout closed, the child not yet exited
};

void StdioUpstream::Advance(RunState& state, TimePoint now) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !state.stop_started) {
      state.stop_started = true;
      closed_ = true;
      queued_.clear();
      stdin_.Close();  // end of file: MCP's stdio shutdown
      state.term_at = now + grace_ / 3;
      state.kill_at = now + grace_;
    }
  }
  if (!state.exited && now >= state.term_at) {
    ::kill(-pid_, SIGTERM);
    state.term_at = TimePoint::max();
  }
  if (!state.exited && now >= state.kill_at) {
    ::kill(-pid_, SIGKILL);
    state.kill_at = TimePoint::max();
  }
  const bool look = state.may_have_exited;
  state.may_have_exited = !pidfd_.open();
  if (!state.exited && look && ChildExited(pid_)) {
    state.exited = true;
    ::kill(-pid_, SIGKILL);  // rule 4: the group goes with the child
    state.drain_until = now + kDrain;
    state.stdout_kill_at = TimePoint::max();
  }
  if (!state.out_open && !state.exited && state.why.empty()) {
    if (state.stdout_kill_at == TimePoint::max()) state.stdout_kill_at = now + kExitAfterStdout;
    if (now >= state.stdout_kill_at) {
      state.why = "closed its stdout";
      state.stdout_kill_at = TimePoint::max();
      ::kill(-pid_, SIGKILL);
    }
  }
}

void StdioUpstream::ReadStream(Fd& fd, LineFramer& framer, bool& open) {
  char buffer[64 * 1024];
  for (int reads = 0; reads < 16; ++reads) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      framer.Feed(std::string_view(buffer, static_cast<size_t>(n)));
      // A pipe's short read took all it held: poll says when there is more (one read()
      // per answer instead of two, the second always EAGAIN).
      if (static_cast<size_t>(n) < sizeof buffer) return;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    // End of file (or an error, which ends it too). A last line without "\n" is half a
    // message: dropped.
    if (framer.buffered() > 0) {
      spdlog::warn("upstream closed a stream in the middle of a line ({} bytes dropped)",
                   framer.buffered());
    }
    fd.Close();
    open = false;
    return;
  }
}

void StdioUpstream::WriteQueued() {
  std::lock_guard<std::mutex> lock(mu_);
  const ssize_t n = ::write(stdin_.get(), queued_.data(), queued_.size());
  if (n > 0) {
    queued_.erase(0, static_cast<size_t>(n));
  } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
    // The upstream closed its stdin: nothing more can reach it.
    stdin_.Close();
    closed_ = true;
    queued_.clear();
  }
}

void StdioUpstream::PollOnce(RunState& state, LineFramer& out, LineFramer& err, TimePoint now) {
  pollfd fds[5];  // stdout, stderr, stdin, the wake fd, the pidfd
  nfds_t count = 0;
  int out_at = -1;
  int err_at = -1;
  int in_at = -1;
  int wake_at = -1;
  int pid_at = -1;
  auto watch = [&](int fd, short events) {
    fds[count] = {fd, events, 0};
    return static_cast<int>(count++);
  };
  if (state.out_open) out_at = watch(stdout_.get(), POLLIN);
  if (state.err_open) err_at = watch(stderr_.get(), POLLIN);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stdin_.open() && !queued_.empty()) in_at = watch(stdin_.get(), POLLOUT);
  }
  if (wake_.open()) wake_at = watch(wake_.get(), POLLIN);
  if (!state.exited && pidfd_.open()) pid_at = watch(pidfd_.get(), POLLIN);
  int timeout = PollTimeoutMs(
      now, std::min({state.term_at, state.kill_at, state.drain_until, state.stdout_kill_at}));
  if (!state.exited && !pidfd_.open() && (timeout < 0 || timeout > kNoPidfdPollMs)) {
    timeout = kNoPidfdPollMs;
  }
  if (::poll(fds, count, timeout) < 0 && errno != EINTR) {
    spdlog::error("upstream: poll failed: {}", std::strerror(errno));
    ::kill(-pid_, SIGKILL);
  }
  if (pid_at >= 0 && fds[pid_at].revents != 0) state.may_have_exited = true;
  if (wake_at >= 0 && fds[wake_at].revents != 0) {
    uint64_t value = 0;
    (void)!::read(wake_.get(), &value, sizeof value);
  }
  if (out_at >= 0 && fds[out_at].revents != 0) ReadStream(stdout_, out, state.out_open);
  if (err_at >= 0 && fds[err_at].revents != 0) ReadStream(stderr_, err, state.err_open);
  if (in_at >= 0 && fds[in_at].revents != 0) WriteQueued();
}

void StdioUpstream::Run() {
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);

  LineFramer out(
      command_.max_line_bytes, [this](std::string_view line) { OnStdoutLine(line); },
      [this](size_t bytes) {
        ++junk_lines_;
        spdlog::warn("upstream wrote a line of more than {} bytes on stdout (dropped)", bytes);
      });
  LineFramer err(
      kStderrLineMax, [this](std::string_view line) { OnStderrLine(line); },
      [](size_t bytes) {
        spdlog::info("[upstream] (a stderr line of {} bytes not logged)", bytes);
      });

  RunState state;
  state.out_open = stdout_.open();
  state.err_open = stderr_.open();
  while (true) {
    const TimePoint now = std::chrono::steady_clock::now();
    Advance(state, now);
    if (state.exited && ((!state.out_open && !state.err_open) || now >= state.drain_until)) break;
    PollOnce(state, out, err, now);
  }

  int status = 0;
  ::kill(-pid_, SIGKILL);
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    queued_.clear();
    stdin_.Close();
  }
  std::string text = ExitText(status);
  if (!state.why.empty() && !state.stop_started) text = state.why + ", then " + text;
  events_.on_closed(std::move(text));
}

}  // namespace keel
