// Outbox: responses are never dropped, progress coalesces per token in place, logs are
// dropped under pressure, and partial writes resume where they stopped.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "server/outbox.h"

namespace keel {
namespace {

// A pipe whose read end the test drains by hand.
struct Pipe {
  Pipe() {
    REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  }
  ~Pipe() {
    close(fds[0]);
    close(fds[1]);
  }
  std::string Drain() {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  int fds[2];
};

TEST_CASE("lines leave in order, each followed by one newline") {
  Outbox outbox;
  outbox.PushResponse("a");
  outbox.PushLog("b");
  outbox.PushResponse("c");
  Pipe pipe;
  CHECK(outbox.WriteTo(pipe.fds[1]) == Outbox::WriteStatus::kDrained);
  CHECK(pipe.Drain() == "a\nb\nc\n");
  CHECK(outbox.empty());
  CHECK(outbox.bytes() == 0);
}

TEST_CASE("newer progress for a token replaces the unsent value in place") {
  Outbox outbox;
  outbox.PushProgress(1, "p1");
  outbox.PushResponse("other");
  outbox.PushProgress(1, "p2");
  outbox.PushProgress(2, "q1");
  outbox.PushResponse("done");
  Pipe pipe;
  outbox.WriteTo(pipe.fds[1]);
  CHECK(pipe.Drain() == "p2\nother\nq1\ndone\n");
}

TEST_CASE("progress queued after its slot was written takes a new slot") {
  Outbox outbox;
  Pipe pipe;
  outbox.PushProgress(1, "p1");
  outbox.WriteTo(pipe.fds[1]);
  outbox.PushProgress(1, "p2");
  outbox.WriteTo(pipe.fds[1]);
  CHECK(pipe.Drain() == "p1\np2\n");
}

TEST_CASE("log lines are dropped once the queue is full but responses never are") {
  Outbox outbox;
  const std::string big(Outbox::kMaxBytesForLogs, 'x');
  outbox.PushResponse(big);
  outbox.PushLog("dropped");
  outbox.PushResponse("kept");
  CHECK(outbox.dropped_logs() == 1);
  CHECK(outbox.bytes() == big.size() + 1 + 5);
}

TEST_CASE("a write that the pipe only partly accepts resumes where it stopped") {
  Outbox outbox;
  Pipe pipe;
  fcntl(pipe.fds[1], F_SETPIPE_SZ, 4096);
  const std::string line(10000, 'y');
  outbox.PushResponse(line);
  outbox.PushResponse("tail");
  std::string received;
  for (int i = 0; i < 100 && !outbox.empty(); ++i) {
    outbox.WriteTo(pipe.fds[1]);
    received += pipe.Drain();
  }
  CHECK(received == line + "\ntail\n");
}

TEST_CASE("a closed reader is reported as the peer being gone") {
  Outbox outbox;
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  close(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  outbox.PushResponse("nobody listens");
  CHECK(outbox.WriteTo(fds[1]) == Outbox::WriteStatus::kPeerGone);
  close(fds[1]);
}

}  // namespace
}  // namespace keel
