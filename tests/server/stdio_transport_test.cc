// StdioTransport over real pipes: backpressure (a client that stops reading stdout stops
// keel reading stdin, so memory stays bounded and no response is dropped), EOF, and a
// vanished reader. Proves DC-2; BP-1's "stop reading instead of dropping" at its base.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "server/clock.h"
#include "server/event_loop.h"
#include "server/stdio_transport.h"

namespace keel {
namespace {

struct Pipes {
  Pipes() {
    REQUIRE(pipe2(in, O_NONBLOCK) == 0);
    REQUIRE(pipe2(out, O_NONBLOCK) == 0);
  }
  ~Pipes() {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
  }
  size_t DrainOut() {
    char buf[1 << 16];
    size_t total = 0;
    ssize_t n;
    while ((n = read(out[0], buf, sizeof(buf))) > 0) total += static_cast<size_t>(n);
    return total;
  }
  int in[2];
  int out[2];
};

TEST_CASE("stdin is not read while the client leaves too much of stdout unread") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int lines = 0;
  StdioTransport transport(loop, pipes.in[0], pipes.out[1], 1 << 20,
                           {.on_line = [&](std::string_view) { ++lines; }});
  const std::string big(StdioTransport::kPauseReadingBytes + (1 << 20), 'x');
  transport.SendResponse(big);
  REQUIRE(write(pipes.in[1], "{}\n", 3) == 3);
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(lines == 0);  // paused: the response is still queued, nothing was dropped

  size_t received = 0;
  for (int i = 0; i < 100000 && lines == 0; ++i) {
    received += pipes.DrainOut();
    loop.RunOnce(Duration::zero());
  }
  CHECK(lines == 1);  // resumed once the client read enough
  received += pipes.DrainOut();
  for (int i = 0; i < 1000 && !transport.outbox().empty(); ++i) {
    loop.RunOnce(Duration::zero());
    received += pipes.DrainOut();
  }
  CHECK(received == big.size() + 1);
}

TEST_CASE("EOF on stdin is reported once and reading stops") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int eofs = 0;
  std::string last;
  StdioTransport transport(loop, pipes.in[0], pipes.out[1], 1 << 20,
                           {.on_line = [&](std::string_view line) { last = line; },
                            .on_eof = [&] { ++eofs; }});
  REQUIRE(write(pipes.in[1], "tail-without-newline", 20) == 20);
  close(pipes.in[1]);
  pipes.in[1] = open("/dev/null", O_WRONLY);  // keep the destructor's close harmless
  for (int i = 0; i < 5; ++i) loop.RunOnce(Duration::zero());
  CHECK(eofs == 1);
  CHECK(last == "tail-without-newline");
  CHECK_FALSE(transport.reading());
}

TEST_CASE("a vanished stdout reader is reported as the peer being gone") {
  signal(SIGPIPE, SIG_IGN);
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int gone = 0;
  StdioTransport transport(loop, pipes.in[0], pipes.out[1], 1 << 20,
                           {.on_peer_gone = [&] { ++gone; }});
  close(pipes.out[0]);
  pipes.out[0] = open("/dev/null", O_RDONLY);
  transport.SendResponse("{}");
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(gone == 1);
}

}  // namespace
}  // namespace keel
