// StdioTransport over real pipes: backpressure at the configured outbox bound (a client
// that stops reading stdout stops keel reading stdin, so memory stays bounded and no
// response is dropped), dropped and discarded progress, EOF, and a vanished reader; and the
// transport side of the boundary (transport.h): decoded messages on the one exchange, the
// lines it answers itself, and a closed exchange reported once.
// Proves DC-2 and BP-1 at the transport.
#include "server/transport/stdio_transport.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"
#include "server/transport/function_dispatcher.h"

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
    while (total < limit && (n = read(out[0], buf, std::min(sizeof(buf), limit - total))) > 0) {
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
  void WriteIn(const std::string& text) {
    REQUIRE(write(in[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  int in[2];
  int out[2];
};

// A well-formed notification: delivered, never answered.
constexpr char kNotification[] = "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n";

// Each line followed by its newline.
std::string Lines(std::initializer_list<std::string> lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST_CASE("stdin pauses when the outbox reaches its bound and resumes below half (BP-1)",
          "[transport][BP-1]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  constexpr size_t kBound = 64 << 10;
  int lines = 0;
  FunctionDispatcher dispatcher({.on_message = [&](Exchange&, Message) { ++lines; }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, kBound,
                           dispatcher);
  const size_t junk = pipes.FillOut();  // the client reads nothing: keel can write nothing
  transport.SendResponse(std::string(kBound - 2, 'x'));  // one byte below the bound
  pipes.WriteIn(kNotification);
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(lines == 1);
  CHECK_FALSE(transport.paused());

  transport.SendResponse("");  // exactly at the bound
  pipes.WriteIn(kNotification);
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
  FunctionDispatcher dispatcher({.on_progress_dropped = [&](Exchange& exchange, uint64_t stream) {
    CHECK(exchange.id() == StdioTransport::kExchangeId);
    dropped.push_back(stream);
  }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, kBound,
                           dispatcher);
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
  FunctionDispatcher dispatcher({.on_progress_dropped = [&](Exchange&, uint64_t) { ++dropped; }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           dispatcher);
  transport.SendProgress(7, "p7");
  transport.SendProgress(8, "p8");
  transport.SendResponse("r");
  transport.DiscardProgress(7);
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(pipes.ReadOut() == "p8\nr\n");
  CHECK(dropped == 0);
}

TEST_CASE("EOF on stdin is reported once, after the last line, and reading stops", "[transport]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  std::vector<std::string> events;
  FunctionDispatcher dispatcher(
      {.on_message = [&](Exchange&, Message message) { events.push_back(message.method); },
       .on_input_ended = [&] { events.push_back("eof"); }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           dispatcher);
  pipes.WriteIn(R"({"jsonrpc":"2.0","method":"tail-without-newline"})");
  close(pipes.in[1]);
  pipes.in[1] = open("/dev/null", O_WRONLY);  // keep the destructor's close harmless
  for (int i = 0; i < 5; ++i) loop.RunOnce(Duration::zero());
  CHECK(events == std::vector<std::string>{"tail-without-newline", "eof"});
  CHECK_FALSE(transport.reading());
}

TEST_CASE("a vanished stdout reader is reported as the peer being gone", "[transport]") {
  signal(SIGPIPE, SIG_IGN);
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int gone = 0;
  FunctionDispatcher dispatcher({.on_exchange_closed = [&](Exchange&) { ++gone; }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           dispatcher);
  close(pipes.out[0]);
  pipes.out[0] = open("/dev/null", O_RDONLY);
  transport.SendResponse("{}");
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(gone == 1);
}

TEST_CASE("messages reach the dispatcher decoded, with the exchange their answers go to",
          "[transport]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  std::vector<Json> ids;
  FunctionDispatcher dispatcher({.on_message = [&](Exchange& exchange, Message message) {
    CHECK(exchange.id() == StdioTransport::kExchangeId);
    CHECK(message.kind == MessageKind::kRequest);
    ids.push_back(message.id);
    exchange.SendResponse(EncodeResult(message.id, Json::object()));
  }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           dispatcher);
  pipes.WriteIn(Lines({R"({"jsonrpc":"2.0","id":0,"method":"ping"})",
                       R"({"jsonrpc":"2.0","id":"0","method":"ping"})"}));
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  REQUIRE(ids.size() == 2);
  CHECK(ids[0].is_number_integer());  // 0 and "0" are different ids, each kept as sent
  CHECK(ids[1] == Json("0"));
  CHECK(pipes.ReadOut() == Lines({R"({"jsonrpc":"2.0","id":0,"result":{}})",
                                  R"({"jsonrpc":"2.0","id":"0","result":{}})"}));
}

TEST_CASE("lines that cannot be decoded are answered by the transport and never delivered",
          "[transport]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  int delivered = 0;
  FunctionDispatcher dispatcher({.on_message = [&](Exchange&, Message) { ++delivered; }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           dispatcher);
  pipes.WriteIn(Lines({
      "not json",
      " \t\r",                                                // blank: skipped
      R"({"jsonrpc":"2.0","method":"n","params":1})",         // a notification: no answer
      R"({"jsonrpc":"2.0","id":0,"method":"m","params":1})",  // a request: answered
  }));
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(delivered == 0);
  CHECK(pipes.ReadOut() == Lines({R"({"jsonrpc":"2.0","error":{"code":-32700,)"
                                  R"("message":"Parse error: the line is not valid JSON"}})",
                                  R"({"jsonrpc":"2.0","id":0,"error":{"code":-32602,)"
                                  R"("message":"Invalid params: params must be an object"}})"}));
}

TEST_CASE("a line over the limit is answered with the limit and the next line is delivered",
          "[transport]") {
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  std::vector<std::string> methods;
  FunctionDispatcher dispatcher(
      {.on_message = [&](Exchange&, Message message) { methods.push_back(message.method); }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 64, 64 << 10,
                           dispatcher);
  pipes.WriteIn(std::string(100, 'x') + "\n" + kNotification);
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK(methods == std::vector<std::string>{"n"});
  CHECK(pipes.ReadOut() == Lines({R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
                                  R"("Invalid Request: line of 100 bytes exceeds )"
                                  R"(--max-line-bytes 64; it was skipped"}})"}));
}

TEST_CASE("a closed exchange is reported to the dispatcher once and written to no more",
          "[transport]") {
  signal(SIGPIPE, SIG_IGN);
  SteadyClock clock;
  EventLoop loop(clock);
  Pipes pipes;
  std::vector<ExchangeId> closed;
  FunctionDispatcher dispatcher(
      {.on_exchange_closed = [&](Exchange& exchange) { closed.push_back(exchange.id()); }});
  StdioTransport transport(loop, StdioFd{pipes.in[0]}, StdioFd{pipes.out[1]}, 1 << 20, 64 << 10,
                           dispatcher);
  close(pipes.out[0]);
  pipes.out[0] = open("/dev/null", O_RDONLY);
  transport.SendResponse("{}");
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  REQUIRE(transport.closed());
  // Answers produced after the close (requests learn of it only now) are harmless.
  transport.SendResponse("{}");
  transport.SendLog("{}");
  for (int i = 0; i < 3; ++i) loop.RunOnce(Duration::zero());
  CHECK_FALSE(transport.FlushBlocking(clock.Now() + Millis(50)));
  CHECK(closed == std::vector<ExchangeId>{StdioTransport::kExchangeId});
}

}  // namespace
}  // namespace keel::stdio_transport_test
