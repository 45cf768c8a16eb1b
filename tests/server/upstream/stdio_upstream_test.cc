// StdioUpstream (WRAP-3): the wrapped server as a child process. What reaches on_message
// (whole JSON-RPC lines only: junk, half lines, over-long lines and stderr never do), the
// connection's end (once, with the exit status), the bounded queue (Send fails, never
// blocks), and Shutdown's EOF, SIGTERM, SIGKILL of the whole process group within the grace.
// The children are tiny /bin/sh scripts; StdioUpstream itself never uses a shell.
#include "server/upstream/stdio_upstream.h"

#include <errno.h>
#include <signal.h>

#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "server/upstream/upstream_events.h"

namespace keel::stdio_upstream_test {
namespace {

using namespace std::chrono_literals;

TimePoint Now() { return std::chrono::steady_clock::now(); }

UpstreamCommand Sh(const std::string& script) {
  UpstreamCommand command;
  command.argv = {"/bin/sh", "-c", script, "sh"};
  command.env = {"PATH=/usr/bin:/bin"};
  return command;
}

std::unique_ptr<StdioUpstream> Spawn(const UpstreamCommand& command, UpstreamEventLog& log) {
  std::string error;
  std::unique_ptr<StdioUpstream> upstream = StdioUpstream::Start(command, log.Events(), &error);
  INFO(error);
  REQUIRE(upstream != nullptr);
  return upstream;
}

std::vector<std::string> Methods(const std::vector<Json>& messages) {
  std::vector<std::string> methods;
  for (const Json& message : messages) methods.push_back(message.value("method", "(response)"));
  return methods;
}

// True once `pid` no longer runs: gone (ESRCH), or a zombie its new parent has not reaped
// (this container's init may never reap it). Death after SIGKILL is asynchronous: this spins,
// yielding, for a bounded time.
bool Gone(pid_t pid) {
  const TimePoint give_up = Now() + 5s;
  do {
    if (::kill(pid, 0) == -1 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(stat)),
                           std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() &&
        (text[paren + 2] == 'Z' || text[paren + 2] == 'X')) {
      return true;
    }
    std::this_thread::yield();
  } while (Now() < give_up);
  return false;
}

}  // namespace

TEST_CASE(
    "only whole JSON-RPC lines reach on_message: junk, other JSON and a half line are dropped",
    "[upstream][WRAP-3]") {
  CapturedUpstreamLog captured;
  UpstreamEventLog log;
  auto upstream = Spawn(Sh(R"(
    echo 'starting up...'
    echo '{"jsonrpc":"2.0","method":"first"}'
    echo '{"not":"json-rpc"}'
    echo '[1,2,3]'
    echo '{"jsonrpc":"1.0","method":"old"}'
    echo '{"jsonrpc":"2.0","id":1}'
    echo '{"jsonrpc":"2.0","method":7}'
    echo '{"jsonrpc":"2.0","id":3,"res'
    echo '   '
    echo '{"jsonrpc":"2.0","id":2,"result":{}}'
    printf '{"jsonrpc":"2.0","method":"half"}'
  )"),
                        log);
  REQUIRE(log.WaitClosed());
  CHECK(Methods(log.messages()) == std::vector<std::string>{"first", "(response)"});
  CHECK(log.messages()[1]["id"] == 2);
  CHECK(captured.Contains("not JSON-RPC (dropped, #1): starting up..."));
  CHECK(captured.Contains("(dropped, #7)"));  // the blank line is not counted, nor the half
  CHECK_FALSE(captured.Contains("(dropped, #8)"));
  CHECK(captured.Contains("in the middle of a line"));
}

TEST_CASE("a stdout line longer than max_line_bytes is dropped and the next line is delivered",
          "[upstream][WRAP-3]") {
  CapturedUpstreamLog captured;
  UpstreamEventLog log;
  UpstreamCommand command = Sh(R"(
    printf '{"jsonrpc":"2.0","method":"long","params":{"pad":"%0200d"}}\n' 0
    echo '{"jsonrpc":"2.0","method":"short"}'
  )");
  command.max_line_bytes = 64;
  auto upstream = Spawn(command, log);
  REQUIRE(log.WaitClosed());
  CHECK(Methods(log.messages()) == std::vector<std::string>{"short"});
  CHECK(captured.Contains("upstream wrote a line of more than"));
}

TEST_CASE("stderr lines are logged with the [upstream] prefix and never reach on_message",
          "[upstream][WRAP-3]") {
  CapturedUpstreamLog captured;
  UpstreamEventLog log;
  auto upstream = Spawn(Sh(R"(
    echo '{"jsonrpc":"2.0","method":"on-stderr"}' >&2
    echo 'warming the cache' >&2
    echo '{"jsonrpc":"2.0","method":"on-stdout"}'
  )"),
                        log);
  REQUIRE(log.WaitClosed());
  CHECK(Methods(log.messages()) == std::vector<std::string>{"on-stdout"});
  CHECK(captured.Contains("[upstream] warming the cache"));
  CHECK(captured.Contains(R"([upstream] {"jsonrpc":"2.0","method":"on-stderr"})"));
}

TEST_CASE("a child that exits ends the connection once, with its exit status, and Send then fails",
          "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  auto upstream = Spawn(Sh("exit 3"), log);
  REQUIRE(log.WaitClosed());
  std::string why;
  CHECK_FALSE(upstream->Send(Json{{"jsonrpc", "2.0"}, {"method", "x"}}, &why));
  CHECK(why == "the upstream connection is closed");
  upstream->Shutdown(Millis(300));
  CHECK(log.closes() == std::vector<std::string>{"exited with status 3"});
}

TEST_CASE(
    "a child that closes its stdout just before it exits is reported as exited, with its status",
    "[upstream][WRAP-3]") {
  // Every exiting child closes its stdout a moment before its exit shows; this one leaves a
  // longer moment between the two, so the end of file is always seen first.
  UpstreamEventLog log;
  auto upstream = Spawn(Sh("exec >&-; sleep 0.05; exit 3"), log);
  REQUIRE(log.WaitClosed());
  CHECK(log.closes() == std::vector<std::string>{"exited with status 3"});
}

TEST_CASE("a child that closes its stdout and runs on is ended, and the reason says so",
          "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  auto upstream = Spawn(Sh("exec >&-; while :; do sleep 0.05; done"), log);
  REQUIRE(log.WaitClosed());
  CHECK(log.closes() == std::vector<std::string>{"closed its stdout, then was killed by signal 9"});
}

TEST_CASE("each message keel sends reaches the child's stdin as one JSON line",
          "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  auto upstream = Spawn(Sh(R"(while read -r line; do printf '%s\n' "$line"; done)"), log);
  const Json first = {{"jsonrpc", "2.0"},
                      {"id", 1},
                      {"method", "tools/call"},
                      {"params", {{"text", "two\nlines and \"quotes\" é"}}}};
  const Json second = {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}};
  std::string why;
  REQUIRE(upstream->Send(first, &why));
  REQUIRE(upstream->Send(second, &why));
  REQUIRE(log.WaitMessages(2));
  CHECK(log.messages() == std::vector<Json>{first, second});
}

TEST_CASE("Shutdown closes stdin first: a server that exits at end of file ends before any signal",
          "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  auto upstream = Spawn(Sh("cat >/dev/null; exit 0"), log);
  upstream->Shutdown(Millis(3000));
  // Not "was killed by signal 15": SIGTERM would have come at a third of the grace.
  CHECK(log.closes() == std::vector<std::string>{"exited with status 0"});
}

TEST_CASE(
    "Shutdown kills a server that ignores EOF and SIGTERM, and its grandchild, within the grace",
    "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  auto upstream = Spawn(Sh(R"(
    trap '' TERM
    ( while :; do sleep 0.05; done ) &
    echo "{\"jsonrpc\":\"2.0\",\"method\":\"grandchild\",\"params\":{\"pid\":$!}}"
    while :; do sleep 0.05; done
  )"),
                        log);
  REQUIRE(log.WaitMessages(1));
  const pid_t child = upstream->pid();
  const pid_t grandchild = log.messages()[0]["params"]["pid"].get<pid_t>();
  REQUIRE(::kill(grandchild, 0) == 0);

  const TimePoint began = Now();
  upstream->Shutdown(Millis(300));
  const Duration took = Now() - began;
  CHECK(took >= Millis(300));          // neither end of file nor SIGTERM stopped it
  CHECK(took < Millis(300) + 1500ms);  // SIGKILL at the grace, then the reaping
  CHECK(log.closes() == std::vector<std::string>{"was killed by signal 9"});
  const int child_signalled = ::kill(child, 0);
  const int child_errno = errno;
  CHECK(child_signalled == -1);  // reaped by StdioUpstream
  CHECK(child_errno == ESRCH);
  CHECK(Gone(grandchild));
}

TEST_CASE(
    "messages reach the child in the order they were sent when the pipe fills: those Send "
    "writes itself and those the I/O thread writes later",
    "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  // The child starts reading late, so the first messages fill the pipe (64 KiB) and the rest
  // queue; every Send after that must queue behind them, not write around them.
  auto upstream = Spawn(Sh("sleep 0.2; exec cat"), log);
  constexpr int kCount = 300;
  std::string why;
  for (int i = 0; i < kCount; ++i) {
    const Json message = {{"jsonrpc", "2.0"},
                          {"method", "notifications/message"},
                          {"params", {{"seq", i}, {"data", std::string(1000, 'x')}}}};
    REQUIRE(upstream->Send(message, &why));
  }
  REQUIRE(log.WaitMessages(kCount));
  const std::vector<Json> got = log.messages();
  for (int i = 0; i < kCount; ++i) CHECK(got[static_cast<size_t>(i)]["params"]["seq"] == i);
}

TEST_CASE("Send fails without blocking once the queue is full, when the child never reads stdin",
          "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  UpstreamCommand command = Sh("exec sleep 30");
  command.max_queued_bytes = 4096;
  auto upstream = Spawn(command, log);
  const Json message = {{"jsonrpc", "2.0"},
                        {"method", "notifications/message"},
                        {"params", {{"data", std::string(1000, 'x')}}}};
  std::string why;
  int sent = 0;
  const TimePoint began = Now();
  // The pipe takes what it can hold (64 KiB by default, at most 1 MiB), then the queue fills.
  while (sent < 5000 && upstream->Send(message, &why)) ++sent;
  CHECK(Now() - began < 2s);  // each Send returned at once
  CHECK(sent < 5000);
  CHECK(why.find("the upstream is not reading its input") != std::string::npos);
  upstream->Shutdown(Millis(300));
  CHECK(log.closes() == std::vector<std::string>{"was killed by signal 15"});
}

TEST_CASE("a command that cannot be spawned gives no transport, and the reason",
          "[upstream][WRAP-3]") {
  UpstreamEventLog log;
  UpstreamCommand command;
  command.argv = {"/nonexistent/mcp-server"};
  std::string error;
  CHECK(StdioUpstream::Start(command, log.Events(), &error) == nullptr);
  CHECK(error.find("No such file or directory") != std::string::npos);
  CHECK(log.closes().empty());
}

}  // namespace keel::stdio_upstream_test
