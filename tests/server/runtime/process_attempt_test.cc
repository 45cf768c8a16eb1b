// ProcessAttempt (IDEM-5): a recorded command run is "gone" only when it surely runs
// no more — another boot, no process in its group, a reused group id, or only zombies left —
// and "may still run" otherwise, including when its group was never recorded.
#include "server/runtime/process_attempt.h"

#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/wait.h>

namespace keel::process_attempt_test {
namespace {

// Starts `script` under /bin/sh as the leader of a new process group; returns its pid.
pid_t StartGroup(const std::string& script) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> argv = {const_cast<char*>("sh"), const_cast<char*>("-c"),
                             const_cast<char*>(script.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/bin/sh", nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  REQUIRE(rc == 0);
  return pid;
}

// Spins (no sleep) until `done` holds, for a bounded time: death after SIGKILL is asynchronous.
bool Eventually(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    if (done()) return true;
    std::this_thread::yield();
  } while (std::chrono::steady_clock::now() < give_up);
  return false;
}

char StateOf(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() ? text[paren + 2] : '?';
}

void Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

TEST_CASE("a running command's group may still run and is gone once killed (zombie or reaped)",
          "[process]") {
  const pid_t leader = StartGroup("exec sleep 30");
  const LedgerAttempt attempt = SpawnedAttempt(leader);
  CHECK(attempt.boot_id == BootId());
  CHECK(attempt.pgid == leader);
  CHECK(attempt.start_ticks > 0);
  CHECK_FALSE(AttemptGone(attempt));
  ::kill(-leader, SIGKILL);
  REQUIRE(Eventually([&] { return StateOf(leader) == 'Z'; }));
  CHECK(AttemptGone(attempt));  // a zombie runs no code again, reaped or not
  Reap(leader);
  CHECK(AttemptGone(attempt));  // no process in the group: kill(-pgid, 0) says ESRCH
}

TEST_CASE("a group whose leader exited while another member runs may still run", "[process]") {
  // The leader leaves a background job in its group and exits (and stays our zombie).
  const pid_t leader = StartGroup("sleep 30 & exit 0");
  const LedgerAttempt attempt = SpawnedAttempt(leader);
  REQUIRE(Eventually([&] { return StateOf(leader) == 'Z'; }));
  CHECK_FALSE(AttemptGone(attempt));
  ::kill(-leader, SIGKILL);
  CHECK(Eventually([&] { return AttemptGone(attempt); }));
  Reap(leader);
}

TEST_CASE("a group id whose leader started at another time was reused: the recorded run is gone",
          "[process]") {
  const pid_t leader = StartGroup("exec sleep 30");
  LedgerAttempt attempt = SpawnedAttempt(leader);
  CHECK_FALSE(AttemptGone(attempt));
  attempt.start_ticks += 1;  // what a run recorded before the id was handed out again looks like
  CHECK(AttemptGone(attempt));
  ::kill(-leader, SIGKILL);
  Reap(leader);
}

TEST_CASE("a run from another boot is gone even if its group id is in use now", "[process]") {
  LedgerAttempt attempt;
  attempt.boot_id = "not-" + BootId();
  attempt.pgid = ::getpgrp();  // a group that surely exists: ours
  CHECK(AttemptGone(attempt));
}

TEST_CASE("a run whose group was never recorded may still run on this boot", "[process]") {
  const LedgerAttempt starting = StartingAttempt();
  CHECK(starting.boot_id == BootId());
  CHECK(starting.pgid == 0);
  CHECK_FALSE(AttemptGone(starting));
}

}  // namespace
}  // namespace keel::process_attempt_test
