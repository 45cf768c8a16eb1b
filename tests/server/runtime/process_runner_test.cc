// RunProcess: what the child sees (argv verbatim, exact env, cwd, stdin, only fds 0-3), what
// comes back (exit code or signal, capped output, progress lines), and how it is stopped
// (cancellation and deadline kill the whole group, SIGTERM then SIGKILL after the grace).
// The children are /bin/sh scripts; the runner itself never uses a shell.
#include "server/runtime/process_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "fakes/temp_dir.h"

namespace keel::process_runner_test {
namespace {

using End = ProcessResult::End;
using namespace std::chrono_literals;

ProcessSpec Sh(const std::string& script, std::vector<std::string> extra_args = {}) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script, "sh"};
  spec.argv.insert(spec.argv.end(), extra_args.begin(), extra_args.end());
  spec.env = {"PATH=/usr/bin:/bin"};
  return spec;
}

TimePoint In(Duration d) { return std::chrono::steady_clock::now() + d; }

ProcessResult Run(const ProcessSpec& spec, std::vector<std::string>* lines = nullptr) {
  CancellationToken token;
  return RunProcess(spec, token, In(60s), [&](std::string_view line) {
    if (lines != nullptr) lines->emplace_back(line);
  });
}

// True once `pid` no longer runs: reaped (ESRCH) or a zombie waiting for its new parent.
// Death after SIGKILL is asynchronous, so this spins (no sleep) for a bounded time.
bool Gone(pid_t pid) {
  const TimePoint give_up = In(5s);
  do {
    if (::kill(pid, 0) == -1 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() &&
        (text[paren + 2] == 'Z' || text[paren + 2] == 'X')) {
      return true;
    }
    std::this_thread::yield();
  } while (std::chrono::steady_clock::now() < give_up);
  return false;
}

// A child whose grandchild ignores SIGTERM and holds every pipe; both report their pids on
// fd 3 (the grandchild only once its trap is set).
const char* const kStubbornGroup =
    R"(echo $$ >&3; sh -c 'trap "" TERM; echo $$ >&3; exec sleep 30' & wait)";

TEST_CASE("exit code, stdout and stderr are captured", "[process]") {
  ProcessResult r = Run(Sh("echo out; echo err >&2; exit 3"));
  CHECK(r.end == End::kExited);
  CHECK(r.exit_code == 3);
  CHECK(r.stdout_data == "out\n");
  CHECK(r.stderr_data == "err\n");
  CHECK_FALSE(r.stdout_truncated);
  CHECK_FALSE(r.stderr_truncated);
}

TEST_CASE("stdin_data reaches the child and is then closed", "[process]") {
  ProcessSpec spec = Sh("cat; echo eof");
  spec.stdin_data = "hello\nworld";
  ProcessResult r = Run(spec);
  CHECK(r.end == End::kExited);
  CHECK(r.stdout_data == "hello\nworldeof\n");
}

TEST_CASE("argv elements with spaces and quotes are passed verbatim", "[process]") {
  ProcessResult r =
      Run(Sh(R"(printf '<%s>\n' "$@")", {"a b", "'single'", "\"double\"", "$HOME;x", "*"}));
  CHECK(r.end == End::kExited);
  CHECK(r.stdout_data == "<a b>\n<'single'>\n<\"double\">\n<$HOME;x>\n<*>\n");
}

TEST_CASE("the environment is exactly spec.env", "[process]") {
  ProcessSpec spec;
  spec.argv = {"/usr/bin/env"};
  spec.env = {"A=1", "B=two words"};
  ProcessResult r = Run(spec);
  CHECK(r.end == End::kExited);
  CHECK(r.stdout_data == "A=1\nB=two words\n");
}

TEST_CASE("the child runs in spec.cwd", "[process]") {
  TempDir dir;
  ProcessSpec spec;
  spec.argv = {"pwd"};  // found through keel's PATH, not the child's (empty) environment
  spec.cwd = dir.path();
  ProcessResult r = Run(spec);
  CHECK(r.end == End::kExited);
  CHECK(r.stdout_data == std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST_CASE("output beyond the cap is discarded and marked, without blocking the child",
          "[process]") {
  ProcessSpec spec = Sh("head -c 5000000 /dev/zero; echo done >&2");
  spec.max_output_bytes = 1000;
  ProcessResult r = Run(spec);
  CHECK(r.end == End::kExited);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_data == std::string(1000, '\0'));
  CHECK(r.stdout_truncated);
  CHECK(r.stderr_data == "done\n");
  CHECK_FALSE(r.stderr_truncated);
}

TEST_CASE("progress lines on fd 3 are delivered in order, complete lines only", "[process]") {
  std::vector<std::string> lines;
  ProcessResult r = Run(Sh("echo one >&3; echo two >&3; echo out; printf partial >&3"), &lines);
  CHECK(r.end == End::kExited);
  CHECK(lines == std::vector<std::string>{"one", "two"});
  CHECK(r.stdout_data == "out\n");
}

TEST_CASE("keel's other fds are not inherited by the child", "[process]") {
  TempDir dir;
  const std::string path = dir.File("leak");
  // Deliberately no O_CLOEXEC, and above fd 3 (which the child's progress pipe replaces).
  int opened = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  REQUIRE(opened >= 0);
  int leaked = ::fcntl(opened, F_DUPFD, 4);
  ::close(opened);
  REQUIRE(leaked >= 4);
  ProcessResult r = Run(Sh(R"(for fd in $(seq 4 20) "$1"; do
                                if (echo x >&$fd) 2>/dev/null; then echo "open $fd"; fi
                              done; echo x >&"$1")",
                           {std::to_string(leaked)}));
  ::close(leaked);
  CHECK(r.end == End::kExited);
  CHECK(r.exit_code != 0);  // the last write fails
  CHECK(r.stdout_data.empty());
  CHECK(std::filesystem::file_size(path) == 0);
}

TEST_CASE("cancellation kills the whole group, including a grandchild ignoring SIGTERM",
          "[process]") {
  ProcessSpec spec = Sh(kStubbornGroup);
  spec.kill_grace = 200ms;
  CancellationToken token;
  std::vector<pid_t> pids;
  ProcessResult r = RunProcess(spec, token, In(60s), [&](std::string_view line) {
    pids.push_back(std::stoi(std::string(line)));
    if (pids.size() == 2) token.Cancel();  // the grandchild's trap is set
  });
  CHECK(r.end == End::kCancelled);
  CHECK(r.signal == SIGTERM);  // the direct child (sh waiting) dies of the SIGTERM
  CHECK(r.elapsed >= 200ms);   // the grandchild held the pipes until the SIGKILL
  REQUIRE(pids.size() == 2);
  CHECK(Gone(pids[0]));
  CHECK(Gone(pids[1]));
}

TEST_CASE("a passed deadline kills the whole group and ends timed out", "[process]") {
  ProcessSpec spec = Sh(kStubbornGroup);
  spec.kill_grace = 100ms;
  CancellationToken token;
  std::vector<pid_t> pids;
  ProcessResult r = RunProcess(spec, token, In(300ms), [&](std::string_view line) {
    pids.push_back(std::stoi(std::string(line)));
  });
  CHECK(r.end == End::kTimedOut);
  CHECK(r.elapsed >= 300ms);
  REQUIRE(!pids.empty());
  for (pid_t pid : pids) CHECK(Gone(pid));
}

TEST_CASE("a child that exits on SIGTERM ends before the grace", "[process]") {
  ProcessSpec spec = Sh("echo ready >&3; exec sleep 30");
  spec.kill_grace = 30s;
  CancellationToken token;
  ProcessResult r = RunProcess(spec, token, In(60s), [&](std::string_view) { token.Cancel(); });
  CHECK(r.end == End::kCancelled);
  CHECK(r.signal == SIGTERM);
  CHECK(r.elapsed < 25s);
}

TEST_CASE("a child that ignores SIGTERM is SIGKILLed after the grace", "[process]") {
  ProcessSpec spec = Sh(R"(trap "" TERM; echo ready >&3; exec sleep 30)");
  spec.kill_grace = 300ms;
  CancellationToken token;
  ProcessResult r = RunProcess(spec, token, In(60s), [&](std::string_view) { token.Cancel(); });
  CHECK(r.end == End::kCancelled);
  CHECK(r.signal == SIGKILL);
  CHECK(r.elapsed >= 300ms);
}

TEST_CASE("a background process left after a normal exit is killed", "[process]") {
  TempDir dir;
  const std::string pid_file = dir.File("pid");
  // The grandchild keeps stdout open; the child waits until it has written its pid.
  ProcessResult r = Run(Sh(R"(sh -c 'echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 30' sh "$1" &
                              while [ ! -f "$1" ]; do :; done; echo bye)",
                           {pid_file}));
  CHECK(r.end == End::kExited);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_data == "bye\n");
  CHECK(r.elapsed < 25s);
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  in >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(Gone(grandchild));
}

// True once `pid` has exited and waits, a zombie, for its parent's wait. Spins (no sleep)
// for a bounded time, like Gone().
bool ExitedUnreaped(pid_t pid) {
  const TimePoint give_up = In(10s);
  do {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z') {
      return true;
    }
    std::this_thread::yield();
  } while (std::chrono::steady_clock::now() < give_up);
  return false;
}

TEST_CASE("every byte a child wrote before exiting arrives even with a kill grace of 0",
          "[process]") {
  TempDir dir;
  const std::string fifo = dir.File("go");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The child writes its output only once the runner is held in the progress callback, and
  // the callback returns only once the child has exited: when the runner looks again, the
  // exit and all 60,000 bytes (less than a pipe holds) are waiting together.
  ProcessSpec spec = Sh(R"(echo $$ >&3; read go < "$1"; head -c 60000 /dev/zero)", {fifo});
  spec.kill_grace = 0ms;
  CancellationToken token;
  ProcessResult r = RunProcess(spec, token, In(60s), [&](std::string_view line) {
    const pid_t child = static_cast<pid_t>(std::stol(std::string(line)));
    std::ofstream(fifo) << "go" << std::endl;
    REQUIRE(ExitedUnreaped(child));
  });
  CHECK(r.end == End::kExited);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_data.size() == 60000);
  CHECK(r.stdout_data == std::string(60000, '\0'));
  CHECK_FALSE(r.stdout_truncated);
}

TEST_CASE("a process that left the group and holds stdout does not hang a run with grace 0",
          "[process]") {
  TempDir dir;
  const std::string pid_file = dir.File("escaped");
  // setsid: the holder is outside the group kill; it keeps stdout open for 30 s.
  ProcessSpec spec =
      Sh(R"(setsid sh -c 'echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 30' sh "$1" &
                           while [ ! -f "$1" ]; do :; done; echo bye)",
         {pid_file});
  spec.kill_grace = 0ms;
  ProcessResult r = Run(spec);
  std::ifstream in(pid_file);
  pid_t escaped = 0;
  in >> escaped;
  if (escaped > 0) ::kill(escaped, SIGKILL);
  CHECK(r.end == End::kExited);
  CHECK(r.stdout_data == "bye\n");
  CHECK(r.elapsed < 25s);  // ended by the drain deadline, not by the holder's exit
}

TEST_CASE("a missing program fails to spawn with a clear error", "[process]") {
  ProcessSpec spec;
  spec.argv = {GENERATE(std::string("keel-no-such-program"), std::string("/nonexistent/prog"))};
  ProcessResult r = Run(spec);
  CHECK(r.end == End::kSpawnFailed);
  CHECK_THAT(r.spawn_error,
             Catch::Contains(spec.argv[0]) && Catch::Contains("No such file or directory"));
}

TEST_CASE("a child killed by a signal ends signaled with that signal", "[process]") {
  ProcessResult r = Run(Sh("echo before; kill -9 $$"));
  CHECK(r.end == End::kSignaled);
  CHECK(r.signal == SIGKILL);
  CHECK(r.stdout_data == "before\n");
}

TEST_CASE("runs on several threads at once keep their own output", "[process]") {
  constexpr int kThreads = 4;
  std::vector<ProcessResult> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&results, i] {
      ProcessSpec spec = Sh("cat; exit $1", {std::to_string(i)});
      spec.stdin_data = "thread " + std::to_string(i);
      results[i] = Run(spec);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    CHECK(results[i].end == End::kExited);
    CHECK(results[i].exit_code == i);
    CHECK(results[i].stdout_data == "thread " + std::to_string(i));
  }
}

}  // namespace
}  // namespace keel::process_runner_test

namespace keel::process_runner_test {
namespace {

TEST_CASE("keel's exit path kills the groups of runs still in progress", "[process]") {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<pid_t> pids;
  ProcessResult result;
  std::thread run([&] {
    CancellationToken never;
    result = RunProcess(Sh(kStubbornGroup), never, In(60s), [&](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu);
      pids.push_back(static_cast<pid_t>(std::stol(std::string(line))));
      cv.notify_all();
    });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return pids.size() == 2; });  // child and grandchild are up
  }
  CHECK(KillRunningProcessGroups() == 1);
  run.join();
  CHECK(result.end == End::kSignaled);
  CHECK(result.signal == SIGKILL);
  CHECK(Gone(pids[0]));
  CHECK(Gone(pids[1]));
  CHECK(KillRunningProcessGroups() == 0);
}

}  // namespace
}  // namespace keel::process_runner_test
