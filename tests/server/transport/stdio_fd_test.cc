// StdioFd: keel's private, non-blocking handles on the stdio streams it inherited. The
// inherited open file descriptions, shared with the parent, keep their flags
// (O_NONBLOCK left on a terminal makes the next program fail with EAGAIN). The last two cases
// run the real binary on pipes and on a terminal, holding keel's ends to look at afterwards.
#include "server/transport/stdio_fd.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/wait.h>

#include "fakes/temp_dir.h"

extern char** environ;

namespace keel::stdio_fd_test {
namespace {

bool NonBlocking(int fd) { return (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0; }

// Writes through `out` until it reports EAGAIN; false if it took more than `limit` bytes.
bool FillsWithoutBlocking(const StdioFd& out, size_t limit) {
  std::string chunk(4096, 'x');
  iovec iov{chunk.data(), chunk.size()};
  size_t total = 0;
  for (;;) {
    const ssize_t n = WriteSome(out, &iov, 1);
    if (n < 0) return errno == EAGAIN;
    total += static_cast<size_t>(n);
    if (total > limit) return false;
  }
}

TEST_CASE(
    "a pipe is reopened as a private non-blocking handle while the inherited one stays blocking") {
  int fds[2];
  REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
  const StdioFd out = TakeStdio(fds[1], O_WRONLY);
  const StdioFd in = TakeStdio(fds[0], O_RDONLY);
  REQUIRE(out.fd >= 0);
  CHECK(out.kind == StdioFd::Kind::kOwn);
  CHECK(FillsWithoutBlocking(out, 16 << 20));
  char byte;
  CHECK(ReadSome(in, &byte, 1) == 1);
  CHECK_FALSE(NonBlocking(fds[0]));
  CHECK_FALSE(NonBlocking(fds[1]));
  for (int fd : {fds[0], fds[1], in.fd, out.fd}) close(fd);
}

TEST_CASE("a socket is used with MSG_DONTWAIT and keeps its flags") {
  int fds[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  const StdioFd out = TakeStdio(fds[0], O_WRONLY);
  const StdioFd in = TakeStdio(fds[1], O_RDONLY);
  CHECK(out.kind == StdioFd::Kind::kSocket);
  char byte;
  CHECK(ReadSome(in, &byte, 1) == -1);  // nothing sent yet: EAGAIN, not a wait
  CHECK(errno == EAGAIN);
  CHECK(FillsWithoutBlocking(out, 64 << 20));
  CHECK_FALSE(NonBlocking(fds[0]));
  CHECK_FALSE(NonBlocking(fds[1]));
  for (int fd : {fds[0], fds[1], in.fd, out.fd}) close(fd);
}

TEST_CASE("a regular file is used as it is: its offset and append mode still hold") {
  TempDir dir;
  const std::string path = dir.Write("log", "first\n");
  const int appending = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(appending >= 0);
  const StdioFd out = TakeStdio(appending, O_WRONLY);
  CHECK(out.kind == StdioFd::Kind::kFile);
  std::string line = "second\n";
  iovec iov{line.data(), line.size()};
  CHECK(WriteSome(out, &iov, 1) == 7);
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  CHECK(contents.str() == "first\nsecond\n");
  close(appending);
  close(out.fd);
}

// Runs keel with `in` as its stdin and `out` as its stdout (stderr: /dev/null).
pid_t SpawnKeel(const TempDir& dir, int in, int out) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const std::string db = "--db=" + dir.File("keel.db");
  char* argv[] = {const_cast<char*>(KEEL_BINARY), const_cast<char*>(db.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, KEEL_BINARY, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

// Reads `fd` until `text` shows up (10 s at most: a real process on a shared machine).
bool ReadUntil(int fd, const std::string& text) {
  std::string seen;
  char buffer[4096];
  while (seen.find(text) == std::string::npos) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 10000) <= 0) return false;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) return false;
    seen.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

int WaitExit(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

constexpr const char* kPing = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n";

TEST_CASE("keel leaves the stdin and stdout pipes it inherited without O_NONBLOCK") {
  TempDir dir;
  int in[2], out[2];
  REQUIRE(pipe2(in, O_CLOEXEC) == 0);
  REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  // The test keeps keel's ends (in[0], out[1]): it shares their open file descriptions.
  const pid_t pid = SpawnKeel(dir, in[0], out[1]);
  REQUIRE(write(in[1], kPing, strlen(kPing)) == static_cast<ssize_t>(strlen(kPing)));
  CHECK(ReadUntil(out[0], "\"result\":{}"));
  close(in[1]);  // EOF: keel exits
  CHECK(WaitExit(pid) == 0);
  CHECK_FALSE(NonBlocking(in[0]));
  CHECK_FALSE(NonBlocking(out[1]));
  for (int fd : {in[0], out[0], out[1]}) close(fd);
}

TEST_CASE("keel leaves the terminal it inherited without O_NONBLOCK") {
  const int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
    WARN("no pseudo-terminal here; skipped");
    return;
  }
  const int terminal = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(terminal >= 0);
  TempDir dir;
  const pid_t pid = SpawnKeel(dir, terminal, terminal);
  REQUIRE(write(master, kPing, strlen(kPing)) == static_cast<ssize_t>(strlen(kPing)));
  CHECK(ReadUntil(master, "\"result\":{}"));  // not the echo of the ping
  REQUIRE(write(master, "\x04", 1) == 1);     // VEOF at the start of a line: keel reads EOF
  CHECK(WaitExit(pid) == 0);
  CHECK_FALSE(NonBlocking(terminal));
  close(terminal);
  close(master);
}

}  // namespace
}  // namespace keel::stdio_fd_test
