// An Exchange names its peer (the scope of JSON-RPC ids): its own id unless the transport
// gives another; a SingleSinkRouter is one sink for every exchange; a sink that knows no
// requests writes them as responses.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/recording_sink.h"
#include "server/transport/exchange.h"
#include "server/transport/output_router.h"

namespace keel::exchange_peer_test {
namespace {

class LineExchange final : public Exchange {
 public:
  using Exchange::Exchange;
  void SendResponse(std::string line) override { lines.push_back(std::move(line)); }
  void SendProgress(uint64_t, std::string) override {}
  void DiscardProgress(uint64_t) override {}
  void SendLog(std::string) override {}
  std::vector<std::string> lines;
};

TEST_CASE("an exchange is its own peer unless the transport names one", "[transport][peers]") {
  CHECK(LineExchange(5).peer() == 5);
  CHECK(LineExchange(5, kNoPeer).peer() == 5);
  const LineExchange legacy(6, 3);
  CHECK(legacy.id() == 6);
  CHECK(legacy.peer() == 3);
}

TEST_CASE("a request written to a sink without its own framing goes out as a response",
          "[transport]") {
  LineExchange exchange(7);
  OutputSink& sink = exchange;
  sink.SendRequest(R"({"jsonrpc":"2.0","id":"keel-1","method":"roots/list"})");
  REQUIRE(exchange.lines.size() == 1);
  CHECK(exchange.lines[0] == R"({"jsonrpc":"2.0","id":"keel-1","method":"roots/list"})");
}

TEST_CASE("a single-sink router gives its sink for every exchange and for none", "[transport]") {
  RecordingSink sink;
  SingleSinkRouter router(sink);
  CHECK(router.Find(kNoExchange) == &sink);
  CHECK(router.Find(42) == &sink);
}

}  // namespace
}  // namespace keel::exchange_peer_test
