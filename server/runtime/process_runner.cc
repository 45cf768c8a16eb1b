#include "server/runtime/process_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <set>
#include <utility>

#include "server/runtime/nonblocking.h"

namespace keel {
namespace {

// Pipes live above this number in keel, so none of them is already the fd (0..3) it is
// dup2'ed to in the child: dup2 onto itself would keep close-on-exec set.
constexpr int kMinParentFd = 10;
// Read chunk: one pipe's default capacity.
constexpr size_t kReadChunk = 64 * 1024;
// Without a pidfd the child's exit is noticed by polling at this interval.
constexpr int kNoPidfdPollMs = 10;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }

  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A close-on-exec pipe whose ends are both >= kMinParentFd.
bool MakePipe(Fd* read_end, Fd* write_end, std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + strerror(errno);
    return false;
  }
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, kMinParentFd);
    if (moved < 0) {
      *error = std::string("fcntl: ") + strerror(errno);
      return false;
    }
    end = Fd(moved);
  }
  *read_end = std::move(ends[0]);
  *write_end = std::move(ends[1]);
  return true;
}

// write() that cannot kill keel with SIGPIPE when the child closed its stdin early: SIGPIPE
// is blocked in this thread only, and one it raised is consumed before unblocking.
ssize_t WriteWithoutSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  ssize_t written = ::write(fd, data, size);
  const int saved_errno = errno;
  if (written < 0 && saved_errno == EPIPE && !was_pending) {
    timespec zero{};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved_errno;
  return written;
}

// One stream read from the child: stdout, stderr (captured, capped) or progress (split
// into lines, each capped).
struct Stream {
  Fd fd;
  std::string* data = nullptr;  // null for progress
  bool* truncated = nullptr;
  std::string line;  // progress only: the incomplete line so far
  bool line_too_long = false;
};

void Consume(Stream& stream, const char* bytes, size_t size, size_t cap,
             const std::function<void(std::string_view)>& on_line) {
  if (stream.data != nullptr) {
    size_t room = cap - std::min(cap, stream.data->size());
    stream.data->append(bytes, std::min(room, size));
    if (size > room) *stream.truncated = true;
    return;
  }
  std::string_view rest(bytes, size);
  while (!rest.empty()) {
    size_t newline = rest.find('\n');
    std::string_view piece = rest.substr(0, newline);
    size_t room = cap - std::min(cap, stream.line.size());
    stream.line.append(piece.substr(0, room));
    if (piece.size() > room) stream.line_too_long = true;
    if (newline == std::string_view::npos) break;
    if (on_line) on_line(stream.line);
    stream.line.clear();
    stream.line_too_long = false;
    rest.remove_prefix(newline + 1);
  }
}

// Reads what `stream`'s pipe holds right now (never more: a holder still writing cannot
// keep us here), without waiting.
void DrainBuffered(Stream& stream, size_t cap,
                   const std::function<void(std::string_view)>& on_line) {
  int pending = 0;
  if (::ioctl(stream.fd.get(), FIONREAD, &pending) != 0) return;
  char buffer[kReadChunk];
  size_t left = static_cast<size_t>(std::max(pending, 0));
  while (left > 0) {
    ssize_t n = ::read(stream.fd.get(), buffer, std::min(left, sizeof buffer));
    if (n <= 0) break;
    Consume(stream, buffer, static_cast<size_t>(n), cap, on_line);
    left -= std::min(left, static_cast<size_t>(n));
  }
}

int PollTimeoutMs(TimePoint now, TimePoint wake) {
  if (wake == TimePoint::max()) return -1;
  if (wake <= now) return 0;
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(wake - now).count();
  long long ms = (micros + 999) / 1000;  // round up: waking early only spins
  return static_cast<int>(std::min<long long>(ms, INT_MAX));
}

TimePoint AddSaturating(TimePoint t, Duration d) {
  if (t == TimePoint::max() || d >= TimePoint::max() - t) return TimePoint::max();
  return t + d;
}

}  // namespace

namespace {

// The process groups of the runs in progress (for KillRunningProcessGroups). A group is
// listed from its spawn until just before its leader is reaped, so a listed id always names
// our group, never a reused pid.
class GroupSet {
 public:
  void Add(pid_t pid) {
    std::lock_guard<std::mutex> lock(mu_);
    pids_.insert(pid);
  }
  void Remove(pid_t pid) {
    std::lock_guard<std::mutex> lock(mu_);
    pids_.erase(pid);
  }
  size_t KillAll() {
    std::lock_guard<std::mutex> lock(mu_);
    for (pid_t pid : pids_) ::kill(-pid, SIGKILL);
    return pids_.size();
  }

 private:
  std::mutex mu_;
  std::set<pid_t> pids_;
};

GroupSet& RunningGroups() {
  static GroupSet* groups = new GroupSet();  // never destroyed: usable until _Exit
  return *groups;
}

}  // namespace

ProcessResult RunProcess(const ProcessSpec& spec, const CancellationToken& token,
                         TimePoint deadline,
                         const std::function<void(std::string_view line)>& on_progress_line) {
  using End = ProcessResult::End;
  const TimePoint start = std::chrono::steady_clock::now();
  ProcessResult result;
  auto finish = [&]() -> ProcessResult {
    result.elapsed = std::chrono::steady_clock::now() - start;
    return std::move(result);
  };
  auto spawn_failed = [&](std::string error) {
    result.end = End::kSpawnFailed;
    result.spawn_error = std::move(error);
    return finish();
  };
  if (spec.argv.empty()) return spawn_failed("empty argv: no program to run");

  // Wake-up for cancellation: the callback (on the cancelling thread) writes one byte.
  Fd wake_read, wake_write;
  Fd stdin_read, stdin_write, stdout_read, stdout_write, stderr_read, stderr_write;
  Fd progress_read, progress_write;
  std::string error;
  if (!MakePipe(&wake_read, &wake_write, &error) ||
      !MakePipe(&stdin_read, &stdin_write, &error) ||
      !MakePipe(&stdout_read, &stdout_write, &error) ||
      !MakePipe(&stderr_read, &stderr_write, &error) ||
      !MakePipe(&progress_read, &progress_write, &error)) {
    return spawn_failed(error);
  }
  SetNonBlocking(wake_write.get());
  // Declared after the pipes so it is unregistered before they close.
  CancellationToken::Registration on_cancel = token.OnCancel([fd = wake_write.get()] {
    char byte = 1;
    [[maybe_unused]] ssize_t ignored = ::write(fd, &byte, 1);
  });

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, stdout_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, stderr_write.get(), 2);
  posix_spawn_file_actions_adddup2(&actions, progress_write.get(), 3);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  // Everything else keel has open (protocol fd, database fds, other runs' pipes) goes.
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setsigdefault(&attr, &all_signals);  // keel ignores SIGPIPE; the child must not

  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& var : spec.env) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  const bool path_lookup = spec.argv[0].find('/') == std::string::npos;
  int rc = path_lookup
               ? posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data())
               : posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    std::string message = "cannot run '" + spec.argv[0] + "'";
    if (!spec.cwd.empty()) message += " in '" + spec.cwd + "'";
    return spawn_failed(message + ": " + strerror(rc));
  }
  RunningGroups().Add(pid);
  if (spec.on_spawned) spec.on_spawned(pid);
  // The child's ends belong to the child now; holding them would hide EOF.
  stdin_read.Close();
  stdout_write.Close();
  stderr_write.Close();
  progress_write.Close();

  // glibc 2.36's <sys/pidfd.h> lacks extern "C", so the syscall is made directly. -1 when
  // the kernel lacks it (< 5.3): the child's exit is then noticed by polling waitid.
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  for (Fd* fd : {&stdin_write, &stdout_read, &stderr_read, &progress_read}) {
    SetNonBlocking(fd->get());
  }
  size_t stdin_offset = 0;
  if (spec.stdin_data.empty()) stdin_write.Close();

  Stream streams[3];
  streams[0].fd = std::move(stdout_read);
  streams[0].data = &result.stdout_data;
  streams[0].truncated = &result.stdout_truncated;
  streams[1].fd = std::move(stderr_read);
  streams[1].data = &result.stderr_data;
  streams[1].truncated = &result.stderr_truncated;
  streams[2].fd = std::move(progress_read);

  enum class Stop { kNone, kCancel, kTimeout };
  Stop stop = Stop::kNone;
  TimePoint kill_at = TimePoint::max();     // stopping: when SIGTERM's grace ends
  TimePoint abandon_at = TimePoint::max();  // pipes still open this long after SIGKILL: give up
  bool killed = false;
  bool exited = false;
  siginfo_t exit_info{};

  auto kill_group = [&](TimePoint now) {
    ::kill(-pid, SIGKILL);
    // Read to EOF even with a grace of 0: what the child wrote before it died is in the pipes.
    if (!killed) abandon_at = AddSaturating(now, std::max(spec.kill_grace, kMinDrain));
    killed = true;
  };
  auto streams_open = [&] {
    return std::any_of(std::begin(streams), std::end(streams),
                       [](const Stream& s) { return s.fd.open(); });
  };

  char buffer[kReadChunk];
  for (;;) {
    TimePoint now = std::chrono::steady_clock::now();
    if (!exited) {
      exit_info.si_pid = 0;
      // WNOWAIT: the child stays a zombie, so its pid (the group id) cannot be reused
      // while we may still signal the group.
      if (::waitid(P_PID, pid, &exit_info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          exit_info.si_pid == pid) {
        exited = true;
        // Stragglers of a normal exit are killed now; a stopping group keeps its grace.
        if (stop == Stop::kNone) kill_group(now);
      }
    }
    if (!exited && stop == Stop::kNone) {
      Stop reason = token.IsCancelled() ? Stop::kCancel
                    : now >= deadline   ? Stop::kTimeout
                                        : Stop::kNone;
      if (reason != Stop::kNone) {
        stop = reason;
        ::kill(-pid, SIGTERM);
        kill_at = AddSaturating(now, spec.kill_grace);
      }
    }
    if (stop != Stop::kNone && !killed && now >= kill_at) kill_group(now);
    if (exited && !streams_open()) break;
    if (exited && killed && now >= abandon_at) {
      // A holder escaped the group: take what the pipes hold now, then give up on them.
      for (Stream& s : streams) {
        if (s.fd.open()) DrainBuffered(s, spec.max_output_bytes, on_progress_line);
      }
      break;
    }

    std::vector<pollfd> fds;
    if (stop == Stop::kNone && !exited) fds.push_back({wake_read.get(), POLLIN, 0});
    if (pidfd.open() && !exited) fds.push_back({pidfd.get(), POLLIN, 0});
    if (stdin_write.open()) fds.push_back({stdin_write.get(), POLLOUT, 0});
    for (Stream& s : streams) {
      if (s.fd.open()) fds.push_back({s.fd.get(), POLLIN, 0});
    }
    TimePoint wake = TimePoint::max();
    if (stop == Stop::kNone && !exited) wake = deadline;
    if (stop != Stop::kNone && !killed) wake = std::min(wake, kill_at);
    if (killed) wake = std::min(wake, abandon_at);
    int timeout = PollTimeoutMs(now, wake);
    if (!pidfd.open() && !exited && (timeout < 0 || timeout > kNoPidfdPollMs)) {
      timeout = kNoPidfdPollMs;
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;

    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == stdin_write.get()) {
        ssize_t n = WriteWithoutSigpipe(p.fd, spec.stdin_data.data() + stdin_offset,
                                        spec.stdin_data.size() - stdin_offset);
        if (n > 0) stdin_offset += static_cast<size_t>(n);
        // EOF is how the child learns the input is complete; a closed reader drops the rest.
        if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
            stdin_offset == spec.stdin_data.size()) {
          stdin_write.Close();
        }
        continue;
      }
      for (Stream& s : streams) {
        if (!s.fd.open() || p.fd != s.fd.get()) continue;
        ssize_t n = ::read(p.fd, buffer, sizeof buffer);
        if (n > 0) {
          Consume(s, buffer, static_cast<size_t>(n), spec.max_output_bytes, on_progress_line);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          s.fd.Close();  // an unterminated last progress line is not a line: dropped
        }
      }
    }
  }

  // Nothing of the group outlives the run; the child is still an unreaped zombie here.
  ::kill(-pid, SIGKILL);
  RunningGroups().Remove(pid);  // before the reap: the group id is never signalled once free
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (stop == Stop::kCancel) {
    result.end = End::kCancelled;
  } else if (stop == Stop::kTimeout) {
    result.end = End::kTimedOut;
  } else {
    result.end = WIFSIGNALED(status) ? End::kSignaled : End::kExited;
  }
  return finish();
}

size_t KillRunningProcessGroups() { return RunningGroups().KillAll(); }

}  // namespace keel
