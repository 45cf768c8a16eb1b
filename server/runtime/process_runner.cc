#include "server/runtime/process_runner.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <set>
#include <utility>

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "server/runtime/nonblocking.h"
#include "server/runtime/process_spawn.h"
#include "server/runtime/process_supervisor.h"
#include "server/runtime/stream_capture.h"

namespace keel {
namespace {

using LineFn = std::function<void(std::string_view line)>;

// Read chunk: one pipe's default capacity.
constexpr size_t kReadChunk = 64 * 1024;
// Without a pidfd the child's exit is noticed by polling at this interval.
constexpr int kNoPidfdPollMs = 10;

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

// One output pipe of the child and what is kept of it.
struct ChildStream {
  Fd fd;
  StreamCapture capture;
};

// One read of what the pipe holds; end of file (or an error) closes it.
void ReadOnce(ChildStream& stream) {
  char buffer[kReadChunk];
  ssize_t n = ::read(stream.fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    stream.capture.Consume(std::string_view(buffer, static_cast<size_t>(n)));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    stream.fd.Close();  // an unterminated last progress line is not a line: dropped
  }
}

// Reads what the pipe holds right now (never more: a holder still writing cannot keep us
// here), without waiting.
void DrainBuffered(ChildStream& stream) {
  int pending = 0;
  if (::ioctl(stream.fd.get(), FIONREAD, &pending) != 0) return;
  char buffer[kReadChunk];
  size_t left = static_cast<size_t>(std::max(pending, 0));
  while (left > 0) {
    ssize_t n = ::read(stream.fd.get(), buffer, std::min(left, sizeof buffer));
    if (n <= 0) break;
    stream.capture.Consume(std::string_view(buffer, static_cast<size_t>(n)));
    left -= std::min(left, static_cast<size_t>(n));
  }
}

// The I/O side of one run: the spawned child, its pipes, and the waits. The decisions are
// the ProcessSupervisor's; this carries them out.
class ChildRun {
 public:
  // wake_fd: the read end of the pipe a cancellation writes to; it outlives the run.
  ChildRun(const ProcessSpec& spec, pid_t pid, ChildPipes pipes, int wake_fd,
           const LineFn* on_progress_line)
      : spec_(spec),
        pid_(pid),
        // glibc 2.36's <sys/pidfd.h> lacks extern "C", so the syscall is made directly. -1
        // when the kernel lacks it (< 5.3): the child's exit is then noticed by polling.
        pidfd_(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))),
        wake_fd_(wake_fd),
        stdin_write_(std::move(pipes.stdin_write)),
        streams_{{std::move(pipes.stdout_read), StreamCapture::Bytes(spec.max_output_bytes)},
                 {std::move(pipes.stderr_read), StreamCapture::Bytes(spec.max_output_bytes)},
                 {std::move(pipes.progress_read),
                  StreamCapture::Lines(spec.max_output_bytes, on_progress_line)}} {
    if (spec_.stdin_data.empty()) stdin_write_.Close();
  }

  ProcessSupervisor::Seen Look(const ProcessSupervisor& supervisor,
                               const CancellationToken& token) const;
  void Carry(const ProcessSupervisor::Orders& orders) const;
  // Waits for something to happen (or the supervisor's next wake) and moves the bytes that
  // are ready; false when poll itself failed.
  bool WaitAndTransfer(TimePoint now, const ProcessSupervisor& supervisor);
  void DrainAll();
  // Kills what is left of the group and reaps the child; its wait status.
  int KillAndReap();
  void TakeOutput(ProcessResult& result);

 private:
  std::vector<pollfd> PollSet(const ProcessSupervisor& supervisor) const;
  void FeedStdin();

  const ProcessSpec& spec_;
  const pid_t pid_;
  Fd pidfd_;
  const int wake_fd_;
  Fd stdin_write_;
  size_t stdin_offset_ = 0;
  ChildStream streams_[3];  // stdout, stderr, progress
};

ProcessSupervisor::Seen ChildRun::Look(const ProcessSupervisor& supervisor,
                                       const CancellationToken& token) const {
  ProcessSupervisor::Seen seen;
  seen.child_exited = supervisor.child_exited();
  if (!seen.child_exited) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie, so its pid (the group id) cannot be reused while
    // we may still signal the group.
    seen.child_exited =
        ::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
  }
  seen.cancelled = token.IsCancelled();
  seen.pipes_open = std::any_of(std::begin(streams_), std::end(streams_),
                                [](const ChildStream& s) { return s.fd.open(); });
  return seen;
}

void ChildRun::Carry(const ProcessSupervisor::Orders& orders) const {
  if (orders.terminate_group) ::kill(-pid_, SIGTERM);
  if (orders.kill_group) ::kill(-pid_, SIGKILL);
}

std::vector<pollfd> ChildRun::PollSet(const ProcessSupervisor& supervisor) const {
  std::vector<pollfd> fds;
  if (supervisor.watching()) fds.push_back({wake_fd_, POLLIN, 0});
  if (pidfd_.open() && !supervisor.child_exited()) fds.push_back({pidfd_.get(), POLLIN, 0});
  if (stdin_write_.open()) fds.push_back({stdin_write_.get(), POLLOUT, 0});
  for (const ChildStream& s : streams_) {
    if (s.fd.open()) fds.push_back({s.fd.get(), POLLIN, 0});
  }
  return fds;
}

bool ChildRun::WaitAndTransfer(TimePoint now, const ProcessSupervisor& supervisor) {
  std::vector<pollfd> fds = PollSet(supervisor);
  int timeout = PollTimeoutMs(now, supervisor.NextWake());
  if (!pidfd_.open() && !supervisor.child_exited() && (timeout < 0 || timeout > kNoPidfdPollMs)) {
    timeout = kNoPidfdPollMs;
  }
  if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return false;
  for (const pollfd& p : fds) {
    if (p.revents == 0) continue;
    if (p.fd == stdin_write_.get()) {
      FeedStdin();
      continue;
    }
    for (ChildStream& s : streams_) {
      if (s.fd.open() && p.fd == s.fd.get()) ReadOnce(s);
    }
  }
  return true;
}

void ChildRun::FeedStdin() {
  const std::string& data = spec_.stdin_data;
  ssize_t n = WriteWithoutSigpipe(stdin_write_.get(), data.data() + stdin_offset_,
                                  data.size() - stdin_offset_);
  if (n > 0) stdin_offset_ += static_cast<size_t>(n);
  // EOF is how the child learns the input is complete; a closed reader drops the rest.
  if ((n < 0 && errno != EAGAIN && errno != EINTR) || stdin_offset_ == data.size()) {
    stdin_write_.Close();
  }
}

void ChildRun::DrainAll() {
  for (ChildStream& s : streams_) {
    if (s.fd.open()) DrainBuffered(s);
  }
}

int ChildRun::KillAndReap() {
  // Nothing of the group outlives the run; the child is still an unreaped zombie here.
  ::kill(-pid_, SIGKILL);
  RunningGroups().Remove(pid_);  // before the reap: the group id is never signalled once free
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void ChildRun::TakeOutput(ProcessResult& result) {
  result.stdout_data = streams_[0].capture.TakeBytes();
  result.stdout_truncated = streams_[0].capture.truncated();
  result.stderr_data = streams_[1].capture.TakeBytes();
  result.stderr_truncated = streams_[1].capture.truncated();
}

// Drives the run until the supervisor ends it (or poll fails).
void Supervise(ChildRun& run, ProcessSupervisor& supervisor, const CancellationToken& token) {
  for (;;) {
    const TimePoint now = std::chrono::steady_clock::now();
    const ProcessSupervisor::Orders orders = supervisor.Advance(now, run.Look(supervisor, token));
    run.Carry(orders);
    using Then = ProcessSupervisor::Orders::Then;
    if (orders.then == Then::kEnd) return;
    if (orders.then == Then::kDrainThenEnd) return run.DrainAll();
    if (!run.WaitAndTransfer(now, supervisor)) return;
  }
}

// How the run ended: what stopped it, else how the child ended (a wait status).
void RecordEnd(ProcessSupervisor::Stop stop, int status, ProcessResult& result) {
  using End = ProcessResult::End;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  switch (stop) {
    case ProcessSupervisor::Stop::kCancelled:
      result.end = End::kCancelled;
      break;
    case ProcessSupervisor::Stop::kTimedOut:
      result.end = End::kTimedOut;
      break;
    case ProcessSupervisor::Stop::kNone:
      result.end = WIFSIGNALED(status) ? End::kSignaled : End::kExited;
      break;
  }
}

ProcessResult SpawnFailed(std::string error) {
  ProcessResult result;
  result.end = ProcessResult::End::kSpawnFailed;
  result.spawn_error = std::move(error);
  return result;
}

ProcessResult RunChild(const ProcessSpec& spec, const CancellationToken& token, TimePoint deadline,
                       const LineFn& on_progress_line) {
  if (spec.argv.empty()) return SpawnFailed("empty argv: no program to run");
  // Wake-up for cancellation: the callback (on the cancelling thread) writes one byte.
  Fd wake_read, wake_write;
  std::string error;
  if (!MakePipe(&wake_read, &wake_write, &error)) return SpawnFailed(error);
  SetNonBlocking(wake_write.get());
  // Declared after the pipe so it is unregistered before either end closes.
  CancellationToken::Registration on_cancel = token.OnCancel([fd = wake_write.get()] {
    char byte = 1;
    [[maybe_unused]] ssize_t ignored = ::write(fd, &byte, 1);
  });
  SpawnedChild child = SpawnChild(spec);
  if (child.pid < 0) return SpawnFailed(std::move(child.error));
  RunningGroups().Add(child.pid);
  if (spec.on_spawned) spec.on_spawned(child.pid);

  ChildRun run(spec, child.pid, std::move(child.pipes), wake_read.get(), &on_progress_line);
  ProcessSupervisor supervisor(deadline, spec.kill_grace);
  Supervise(run, supervisor, token);
  const int status = run.KillAndReap();
  ProcessResult result;
  run.TakeOutput(result);
  RecordEnd(supervisor.stop(), status, result);
  return result;
}

}  // namespace

ProcessResult RunProcess(const ProcessSpec& spec, const CancellationToken& token,
                         TimePoint deadline,
                         const std::function<void(std::string_view line)>& on_progress_line) {
  const TimePoint start = std::chrono::steady_clock::now();
  ProcessResult result = RunChild(spec, token, deadline, on_progress_line);
  result.elapsed = std::chrono::steady_clock::now() - start;
  return result;
}

size_t KillRunningProcessGroups() { return RunningGroups().KillAll(); }

}  // namespace keel
