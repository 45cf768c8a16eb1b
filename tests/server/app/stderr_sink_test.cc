// StderrSink over a real pipe that nobody reads: logging never waits for the
// reader; what does not fit is dropped, counted, and reported once the pipe has room.
#include "server/app/stderr_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include "server/transport/stdio_fd.h"

namespace keel::stderr_sink_test {
namespace {

// A pipe whose read end the test controls; the sink writes through its own handle on the
// write end (TakeStdio), as keel does on fd 2.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0); }
  ~Pipe() {
    close(fds[0]);
    close(fds[1]);
  }
  // Fills the pipe to the brim from the test's own end.
  void Fill() {
    const std::string chunk(4096, '#');
    while (write(fds[1], chunk.data(), chunk.size()) > 0) {
    }
    REQUIRE(errno == EAGAIN);
  }
  // Everything the pipe holds now.
  std::string Drain() {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) out.append(buffer, n);
    return out;
  }
};

struct Logger {
  explicit Logger(Pipe& pipe)
      : sink(std::make_shared<StderrSink>(TakeStdio(pipe.fds[1], O_WRONLY))), logger("t", sink) {
    logger.set_pattern("%v");
    logger.set_level(spdlog::level::trace);
  }
  std::shared_ptr<StderrSink> sink;
  spdlog::logger logger;
};

TEST_CASE("a log line that does not fit in a full stderr is dropped and counted, not waited for") {
  Pipe pipe;
  Logger log(pipe);
  pipe.Fill();
  for (int i = 0; i < 100; ++i) log.logger.warn("line {}", i);
  CHECK(log.sink->unreported_drops() == 100);
  pipe.Drain();
  log.logger.warn("after");
  CHECK(pipe.Drain() == "100 log line(s) dropped: stderr was full\nafter\n");
  CHECK(log.sink->unreported_drops() == 0);
}

TEST_CASE("dropped log lines are reported by a flush once stderr has room") {
  Pipe pipe;
  Logger log(pipe);
  pipe.Fill();
  log.logger.error("lost");
  log.logger.flush();  // still full: the report waits too
  pipe.Drain();
  log.logger.flush();
  CHECK(pipe.Drain() == "1 log line(s) dropped: stderr was full\n");
  log.logger.flush();
  CHECK(pipe.Drain().empty());  // reported once
}

TEST_CASE("a log line cut short by a full stderr is finished before the next line starts") {
  Pipe pipe;
  REQUIRE(fcntl(pipe.fds[1], F_SETPIPE_SZ, 4096) == 4096);  // one page
  Logger log(pipe);
  const std::string long_line(6000, 'a');
  log.logger.warn(long_line);  // the first 4096 bytes fit
  log.logger.warn("dropped");  // the rest of the long line is still owed: no room
  std::string out = pipe.Drain();
  log.logger.warn("next");
  out += pipe.Drain();
  CHECK(out == long_line + "\n1 log line(s) dropped: stderr was full\nnext\n");
}

}  // namespace
}  // namespace keel::stderr_sink_test
