// StdioTransport over real pipes: backpressure at the configured outbox bound (a client
// that stops reading stdout stops keel reading stdin, so memory stays bounded and no
// response is dropped), dropped and discarded progress, EOF, and a vanished reader.
// Proves DC-2 and BP-1 at the transport.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"
#include "server/transport/stdio_transport.h"

namespace keel::stdio_transport_test {
namespace {

struct Pipes {
  Pipes() {
    REQUIRE(pipe2(in, O_NONBLOCK) == 0);
    REQUIRE(pipe2(out, O_NONBLOCK) == 0);
  }
  ~Pipes() {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
  }
  // Reads and counts what keel wrote, at most `limit` bytes.
  size_t DrainOut(size_t limit = SIZE_MAX) {
    char buf[1 << 16];
    size_t total = 0;
    ssize_t n;
    while (total < limit &&
           (n = read(out[0], buf, std::min(sizeof(buf), limit - total))) > 0) {
      total += static_cast<size_t>(n);
    }
    return total;
  }
  std::string ReadOut() {
    std::string text;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
    return text;
  }
  // Shrinks stdout's pipe to one page and fills it, as a client that stopped reading
  // would. Returns the bytes written.
  size_t FillOut() {
    REQUIRE(fcntl(out[1], F_SETPIPE_SZ, 4096) >= 0);
    const std::string page(4096, 'j');
    size_t total = 0;
    for (size_t chunk : {size_t{4096}, size_t{1}}) {
      while (write(out[1], page.data(), chunk) == static_cast<ssize_t>(chunk)) total += chunk;
    }
    return total;
  }
  int in[2];
  int out[2];
};

TEST_CASE("stdin pauses when the outbox reaches its bound and resumes below half (BP-1)",
          "[transport][BP-1]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  constexpr size_t kBound = 64 << 10;
  int lines = 0;
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, kBound,
                           {.on_line = [&](std::string_view) { ++lines; }});
  const size_t junk = pipes.FillOut();  // the client reads nothing: keel can write nothing
  transport.SendResponse(std::string(kBound - 2, 'x'));  // one byte below the bound
  REQUIRE(write(pipes.in[1], "{}\n", 3) == 3);
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(lines == 1);
  CHECK_FALSE(transport.paused());

  transport.SendResponse("");  // exactly at the bound
  REQUIRE(write(pipes.in[1], "{}\n", 3) == 3);
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(transport.paused());
  CHECK(lines == 1);  // paused: the responses are still queued, nothing was dropped
  CHECK(transport.outbox().bytes() == kBound);

  // The client reads a little at a time: reading stays paused down to half the bound.
  size_t received = 0;
  for (int i = 0; i < 10000 && transport.outbox().bytes() >= kBound / 2; ++i) {
    received += pipes.DrainOut(1024);
    loop.RunOnce(Duration::zero());
    if (transport.outbox().bytes() >= kBound / 2) {
      CHECK(transport.paused());
      CHECK(lines == 1);
    }
  }
  CHECK_FALSE(transport.paused());  // below half: resumed at once
  for (int i = 0; i < 3 && lines < 2; ++i) loop.RunOnce(Duration::zero());
  CHECK(lines == 2);
  for (int i = 0; i < 10000 && !transport.outbox().empty(); ++i) {
    received += pipes.DrainOut();
    loop.RunOnce(Duration::zero());
  }
  received += pipes.DrainOut();
  CHECK(received == junk + kBound);
}

TEST_CASE("progress the outbox drops at its bound is reported with its stream (BP-1)",
          "[transport][BP-1]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  constexpr size_t kBound = 64 << 10;
  std::vector<uint64_t> dropped;
  StdioTransport transport(
      loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, kBound,
      {.on_progress_dropped = [&](uint64_t stream) { dropped.push_back(stream); }});
  const size_t junk = pipes.FillOut();
  transport.SendProgress(1, std::string(40000, 'a'));
  transport.SendProgress(2, std::string(40000, 'b'));  // no room beside stream 1's line
  CHECK(dropped == std::vector<uint64_t>{1});
  CHECK(transport.outbox().dropped_progress() == 1);
  size_t received = 0;
  for (int i = 0; i < 10000 && !transport.outbox().empty(); ++i) {
    received += pipes.DrainOut();
    loop.RunOnce(Duration::zero());
  }
  received += pipes.DrainOut();
  CHECK(received == junk + 40001);
}

TEST_CASE("progress of a cancelled request that is still queued is never written (BP-1)",
          "[transport][BP-1]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int dropped = 0;
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           {.on_progress_dropped = [&](uint64_t) { ++dropped; }});
  transport.SendProgress(7, "p7");
  transport.SendProgress(8, "p8");
  transport.SendResponse("r");
  transport.DiscardProgress(7);
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(pipes.ReadOut() == "p8\nr\n");
  CHECK(dropped == 0);
}

TEST_CASE("EOF on stdin is reported once and reading stops", "[transport]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int eofs = 0;
  std::string last;
  StdioTransport transport(
      loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
      {.on_line = [&](std::string_view line) { last = line; }, .on_eof = [&] { ++eofs; }});
  REQUIRE(write(pipes.in[1], "tail-without-newline", 20) == 20);
  close(pipes.in[1]);
  pipes.in[1] = open("/dev/null", O_WRONLY);  // keep the destructor's close harmless
  for (int i = 0; i < 5; ++i) loop.RunOnce(Duration::zero());
  CHECK(eofs == 1);
  CHECK(last == "tail-without-newline");
  CHECK_FALSE(transport.reading());
}

TEST_CASE("a vanished stdout reader is reported as the peer being gone", "[transport]") {
  signal(SIGPIPE, SIG_IGN);
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int gone = 0;
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           {.on_peer_gone = [&] { ++gone; }});
  close(pipes.out[0]);
  pipes.out[0] = open("/dev/null", O_RDONLY);
  transport.SendResponse("{}");
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(gone == 1);
}

}  // namespace
}  // namespace keel::stdio_transport_test
