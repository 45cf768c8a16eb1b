// Outbox (BP-1): responses are never dropped, progress coalesces per stream in place and
// is dropped oldest first at the byte bound, cancelled progress is taken back, logs are
// dropped past half the bound, and partial writes resume where they stopped.
#include "server/transport/outbox.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::outbox_test {
namespace {

// A pipe whose read end the test drains by hand.
struct Pipe {
  Pipe() { REQUIRE(pipe2(fds, O_NONBLOCK) == 0); }
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

// A line that takes exactly `bytes` in the outbox (its newline included).
std::string Sized(const std::string& tag, size_t bytes) {
  std::string line = tag;
  line.resize(bytes - 1, '.');
  return line;
}

// An outbox that records the streams it reports as dropped.
struct Recorded {
  explicit Recorded(size_t max_bytes)
      : outbox(max_bytes, [this](uint64_t stream) { dropped.push_back(stream); }) {}
  std::string WriteAll() {
    Pipe pipe;
    CHECK(outbox.WriteTo(StdioFd{pipe.fds[1]}) == Outbox::WriteStatus::kDrained);
    CHECK(outbox.bytes() == 0);
    return pipe.Drain();
  }
  std::vector<uint64_t> dropped;
  Outbox outbox;
};

TEST_CASE("lines leave in order, each followed by one newline", "[outbox]") {
  Outbox outbox(1 << 20);
  outbox.PushResponse("a");
  outbox.PushLog("b");
  outbox.PushResponse("c");
  CHECK(outbox.bytes() == 6);
  Pipe pipe;
  CHECK(outbox.WriteTo(StdioFd{pipe.fds[1]}) == Outbox::WriteStatus::kDrained);
  CHECK(pipe.Drain() == "a\nb\nc\n");
  CHECK(outbox.empty());
  CHECK(outbox.bytes() == 0);
}

TEST_CASE("newer progress for a stream replaces the unsent value in place (BP-1)",
          "[outbox][BP-1]") {
  Outbox outbox(1 << 20);
  outbox.PushProgress(1, "p1");
  outbox.PushResponse("other");
  outbox.PushProgress(1, "p2-longer");
  CHECK(outbox.bytes() == 10 + 6);
  outbox.PushProgress(2, "q1");
  outbox.PushProgress(1, "p3");
  CHECK(outbox.bytes() == 3 + 6 + 3);
  outbox.PushResponse("done");
  Pipe pipe;
  outbox.WriteTo(StdioFd{pipe.fds[1]});
  CHECK(pipe.Drain() == "p3\nother\nq1\ndone\n");
  CHECK(outbox.dropped_progress() == 0);
}

TEST_CASE("progress queued after its slot was written takes a new slot", "[outbox]") {
  Outbox outbox(1 << 20);
  Pipe pipe;
  outbox.PushProgress(1, "p1");
  outbox.WriteTo(StdioFd{pipe.fds[1]});
  outbox.PushProgress(1, "p2");
  CHECK(outbox.bytes() == 3);
  outbox.WriteTo(StdioFd{pipe.fds[1]});
  CHECK(pipe.Drain() == "p1\np2\n");
}

TEST_CASE("responses are never dropped and keep their order past the bound (BP-1)",
          "[outbox][BP-1]") {
  Recorded r(100);
  r.outbox.PushResponse(Sized("r1", 80));
  r.outbox.PushResponse(Sized("r2", 80));
  r.outbox.PushResponse("r3");
  CHECK(r.outbox.bytes() == 163);
  CHECK(r.WriteAll() == Sized("r1", 80) + "\n" + Sized("r2", 80) + "\nr3\n");
  CHECK(r.dropped.empty());
}

TEST_CASE("Outbox drops the oldest progress first at the bound and reports its stream (BP-1)",
          "[outbox][BP-1]") {
  Recorded r(100);
  r.outbox.PushProgress(1, Sized("a", 30));
  r.outbox.PushResponse(Sized("r", 10));
  r.outbox.PushProgress(2, Sized("b", 30));
  r.outbox.PushProgress(3, Sized("c", 30));
  CHECK(r.outbox.bytes() == 100);  // exactly at the bound: nothing dropped yet
  CHECK(r.dropped.empty());

  r.outbox.PushProgress(4, Sized("d", 50));  // needs 50: streams 1 and 2 go, in that order
  CHECK(r.dropped == std::vector<uint64_t>{1, 2});
  CHECK(r.outbox.dropped_progress() == 2);
  CHECK(r.outbox.bytes() == 90);
  CHECK(r.WriteAll() == Sized("r", 10) + "\n" + Sized("c", 30) + "\n" + Sized("d", 50) + "\n");
}

TEST_CASE("growing a slot drops older streams but never itself, and keeps its place (BP-1)",
          "[outbox][BP-1]") {
  Recorded r(100);
  r.outbox.PushProgress(1, Sized("a1", 30));
  r.outbox.PushProgress(2, Sized("b1", 30));
  r.outbox.PushProgress(3, Sized("c1", 30));
  r.outbox.PushProgress(1, Sized("a2", 45));  // the oldest slot grows: stream 2 makes room
  CHECK(r.dropped == std::vector<uint64_t>{2});
  CHECK(r.outbox.bytes() == 75);
  r.outbox.PushResponse("x");
  CHECK(r.WriteAll() == Sized("a2", 45) + "\n" + Sized("c1", 30) + "\nx\n");
}

TEST_CASE(
    "progress that cannot fit even after dropping all older progress is dropped itself "
    "(BP-1)",
    "[outbox][BP-1]") {
  Recorded r(100);
  r.outbox.PushResponse(Sized("r", 60));
  r.outbox.PushProgress(1, Sized("a1", 20));
  r.outbox.PushProgress(2, Sized("b", 30));  // 60 + 30 fits; 60 + 20 + 30 does not: 1 goes
  CHECK(r.dropped == std::vector<uint64_t>{1});
  r.outbox.PushProgress(3, Sized("c", 41));  // 60 + 41 > 100 whatever is dropped
  CHECK(r.dropped == std::vector<uint64_t>{1, 3});
  r.outbox.PushProgress(2, Sized("b2", 45));  // growing past the bound: the old value stays
  CHECK(r.dropped == std::vector<uint64_t>{1, 3, 2});
  CHECK(r.outbox.dropped_progress() == 3);
  CHECK(r.outbox.bytes() == 90);
  CHECK(r.WriteAll() == Sized("r", 60) + "\n" + Sized("b", 30) + "\n");
}

TEST_CASE(
    "past the bound a slot may be overwritten by a line no longer, not by a longer one "
    "(BP-1)",
    "[outbox][BP-1]") {
  Recorded r(100);
  r.outbox.PushProgress(1, Sized("a1", 30));
  r.outbox.PushResponse(Sized("r", 90));      // responses go past the bound
  r.outbox.PushProgress(1, Sized("a2", 30));  // same size: overwriting needs no room
  r.outbox.PushProgress(1, Sized("a3", 31));  // one more byte does
  CHECK(r.dropped == std::vector<uint64_t>{1});
  CHECK(r.outbox.bytes() == 120);
  CHECK(r.WriteAll() == Sized("a2", 30) + "\n" + Sized("r", 90) + "\n");
}

TEST_CASE("a drop callback may push: it runs after the outbox is consistent (BP-1)",
          "[outbox][BP-1]") {
  std::vector<uint64_t> dropped;
  Outbox* self = nullptr;
  Outbox outbox(50, [&](uint64_t stream) {
    dropped.push_back(stream);
    self->PushResponse("resync " + std::to_string(stream));
  });
  self = &outbox;
  outbox.PushProgress(1, Sized("a", 30));
  outbox.PushProgress(2, Sized("b", 30));
  CHECK(dropped == std::vector<uint64_t>{1});
  CHECK(outbox.bytes() == 30 + 9);
  Pipe pipe;
  outbox.WriteTo(StdioFd{pipe.fds[1]});
  CHECK(pipe.Drain() == Sized("b", 30) + "\nresync 1\n");
}

TEST_CASE("discarded progress of a cancelled request is never written and not reported (BP-1)",
          "[outbox][BP-1]") {
  Recorded r(100);
  r.outbox.PushProgress(1, "p1");
  r.outbox.PushProgress(2, "q1");
  r.outbox.PushResponse("r");
  r.outbox.DiscardProgress(1);
  CHECK(r.outbox.bytes() == 5);
  r.outbox.DiscardProgress(1);   // already gone
  r.outbox.DiscardProgress(99);  // never had a slot
  CHECK(r.outbox.bytes() == 5);
  CHECK(r.WriteAll() == "q1\nr\n");
  CHECK(r.dropped.empty());
  CHECK(r.outbox.dropped_progress() == 0);
}

TEST_CASE("discarding a partly written progress line finishes it instead of cutting it (BP-1)",
          "[outbox][BP-1]") {
  Outbox outbox(1 << 20);
  Pipe pipe;
  REQUIRE(fcntl(pipe.fds[1], F_SETPIPE_SZ, 4096) >= 0);
  const std::string line(10000, 'p');
  outbox.PushProgress(1, line);
  outbox.PushResponse("r");
  CHECK(outbox.WriteTo(StdioFd{pipe.fds[1]}) == Outbox::WriteStatus::kBlocked);
  std::string received = pipe.Drain();
  REQUIRE(!received.empty());
  REQUIRE(received.size() < line.size());
  CHECK(outbox.bytes() == line.size() + 1 + 2 - received.size());

  outbox.DiscardProgress(1);
  outbox.PushProgress(1, "later");  // the head is no longer a slot: this queues behind it
  CHECK(outbox.bytes() == line.size() + 1 + 2 + 6 - received.size());
  for (int i = 0; i < 100 && !outbox.empty(); ++i) {
    outbox.WriteTo(StdioFd{pipe.fds[1]});
    received += pipe.Drain();
  }
  CHECK(received == line + "\nr\nlater\n");
}

TEST_CASE("a partly written progress line is finished, never dropped for room (BP-1)",
          "[outbox][BP-1]") {
  Recorded r(12000);
  Pipe pipe;
  REQUIRE(fcntl(pipe.fds[1], F_SETPIPE_SZ, 4096) >= 0);
  const std::string line(10000, 'p');
  r.outbox.PushProgress(1, line);
  r.outbox.WriteTo(StdioFd{pipe.fds[1]});
  std::string received = pipe.Drain();
  const size_t unsent = line.size() + 1 - received.size();
  CHECK(r.outbox.bytes() == unsent);
  r.outbox.PushProgress(2, Sized("q", 12001 - unsent));  // one byte too many beside the head
  CHECK(r.dropped == std::vector<uint64_t>{2});
  CHECK(r.outbox.bytes() == unsent);
  for (int i = 0; i < 100 && !r.outbox.empty(); ++i) {
    r.outbox.WriteTo(StdioFd{pipe.fds[1]});
    received += pipe.Drain();
  }
  CHECK(received == line + "\n");
}

TEST_CASE("log lines are dropped once the queue holds half the bound (BP-1)", "[outbox][BP-1]") {
  Outbox outbox(100);
  outbox.PushResponse(Sized("r", 49));
  outbox.PushLog("kept");  // 49 < 50
  CHECK(outbox.bytes() == 54);
  outbox.PushLog("dropped");
  CHECK(outbox.dropped_logs() == 1);
  outbox.PushResponse("kept too");
  CHECK(outbox.bytes() == 63);
  Pipe pipe;
  outbox.WriteTo(StdioFd{pipe.fds[1]});
  CHECK(pipe.Drain() == Sized("r", 49) + "\nkept\nkept too\n");
}

TEST_CASE("lines left after drops, overwrites and discards keep their order (BP-1)",
          "[outbox][BP-1]") {
  Recorded r(60);
  Pipe pipe;
  r.outbox.PushResponse("r1");     // 3
  r.outbox.PushProgress(1, "a1");  // 3
  r.outbox.PushProgress(2, "b1");  // 3
  r.outbox.PushLog("l1");          // 3
  r.outbox.PushProgress(3, "c1");  // 3
  r.outbox.PushResponse("r2");     // 3: 18 bytes in all
  r.outbox.PushProgress(2, "b2");  // in place
  r.outbox.DiscardProgress(3);
  r.outbox.PushProgress(4, Sized("d", 45));  // 15 + 45 = 60: fits without a drop
  r.outbox.PushProgress(5, "e1");            // 1 goes (the oldest), then it fits
  CHECK(r.dropped == std::vector<uint64_t>{1});
  CHECK(r.outbox.bytes() == 60);
  CHECK(r.outbox.WriteTo(StdioFd{pipe.fds[1]}) == Outbox::WriteStatus::kDrained);
  CHECK(pipe.Drain() == "r1\nb2\nl1\nr2\n" + Sized("d", 45) + "\ne1\n");
}

TEST_CASE("a write that the pipe only partly accepts resumes where it stopped", "[outbox]") {
  Outbox outbox(1 << 20);
  Pipe pipe;
  REQUIRE(fcntl(pipe.fds[1], F_SETPIPE_SZ, 4096) >= 0);
  const std::string line(10000, 'y');
  outbox.PushResponse(line);
  outbox.PushResponse("tail");
  std::string received;
  for (int i = 0; i < 100 && !outbox.empty(); ++i) {
    outbox.WriteTo(StdioFd{pipe.fds[1]});
    received += pipe.Drain();
    CHECK(outbox.bytes() == line.size() + 1 + 5 - received.size());
  }
  CHECK(received == line + "\ntail\n");
}

TEST_CASE("100k progress streams behind a paused reader keep only the newest that fit (BP-1)",
          "[outbox][BP-1]") {
  // Each push past the bound drops one old stream: cheap per push, or this would crawl.
  constexpr uint64_t kStreams = 100000;
  constexpr size_t kLine = 100;
  constexpr size_t kKept = 1000;
  uint64_t dropped = 0;
  uint64_t next_expected = 1;
  bool in_order = true;
  Outbox outbox(kKept * kLine, [&](uint64_t stream) {
    in_order = in_order && stream == next_expected++;
    ++dropped;
  });
  for (uint64_t s = 1; s <= kStreams; ++s) {
    outbox.PushProgress(s, Sized("s" + std::to_string(s), kLine));
    outbox.PushProgress(s, Sized("t" + std::to_string(s), kLine));  // overwrite in place
  }
  CHECK(in_order);
  CHECK(dropped == kStreams - kKept);
  CHECK(outbox.dropped_progress() == kStreams - kKept);
  CHECK(outbox.bytes() == kKept * kLine);
  for (uint64_t s = 1; s <= kStreams; s += 2) outbox.DiscardProgress(s);
  CHECK(outbox.bytes() == kKept * kLine / 2);

  Pipe pipe;
  std::string received;
  for (int i = 0; i < 1000 && !outbox.empty(); ++i) {
    outbox.WriteTo(StdioFd{pipe.fds[1]});
    received += pipe.Drain();
  }
  CHECK(received.size() == kKept * kLine / 2);
  CHECK(received.rfind("t" + std::to_string(kStreams - kKept + 2) + ".", 0) == 0);
}

TEST_CASE("a closed reader is reported as the peer being gone", "[outbox]") {
  Outbox outbox(1 << 20);
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  close(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  outbox.PushResponse("nobody listens");
  CHECK(outbox.WriteTo(StdioFd{fds[1]}) == Outbox::WriteStatus::kPeerGone);
  close(fds[1]);
}

}  // namespace
}  // namespace keel::outbox_test
