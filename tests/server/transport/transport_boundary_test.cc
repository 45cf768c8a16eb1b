// The transport boundary's own rules (transport.h, exchange.h): an exchange closes once,
// and a dispatcher made of functions ignores the events it was given no function for.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "server/transport/exchange.h"
#include "server/transport/function_dispatcher.h"

namespace keel::transport_boundary_test {
namespace {

// An exchange that keeps its lines; the transport side is the test.
class LineExchange final : public Exchange {
 public:
  explicit LineExchange(ExchangeId id) : Exchange(id) {}
  void SendResponse(std::string line) override { lines.push_back(line); }
  void SendProgress(uint64_t, std::string line) override { lines.push_back(line); }
  void DiscardProgress(uint64_t) override {}
  void SendLog(std::string line) override { lines.push_back(line); }
  std::vector<std::string> lines;
};

// What a transport does when it learns an exchange is gone (exchange.h invariant 2).
void ReportGone(Exchange& exchange, Dispatcher& dispatcher) {
  if (exchange.MarkClosed()) dispatcher.OnExchangeClosed(exchange);
}

TEST_CASE("a closed exchange is reported to the dispatcher once", "[transport]") {
  std::vector<ExchangeId> closed;
  FunctionDispatcher dispatcher(
      {.on_exchange_closed = [&](Exchange& exchange) { closed.push_back(exchange.id()); }});
  LineExchange first(7);
  LineExchange second(8);
  CHECK_FALSE(first.closed());
  ReportGone(first, dispatcher);
  ReportGone(first, dispatcher);  // the transport notices twice (EPIPE, then POLLERR)
  ReportGone(second, dispatcher);
  CHECK(first.closed());
  CHECK(closed == std::vector<ExchangeId>{7, 8});
}

TEST_CASE("a closed exchange still takes output, harmlessly", "[transport]") {
  LineExchange exchange(1);
  REQUIRE(exchange.MarkClosed());
  exchange.SendResponse("late");  // a request that learns of the close only afterwards
  CHECK(exchange.lines == std::vector<std::string>{"late"});
}

TEST_CASE("a function dispatcher routes each event to its function with its exchange",
          "[transport]") {
  std::vector<std::string> events;
  FunctionDispatcher dispatcher(
      {.on_message = [&](Exchange& e,
                         Message m) { events.push_back(std::to_string(e.id()) + " " + m.method); },
       .on_exchange_closed =
           [&](Exchange& e) { events.push_back(std::to_string(e.id()) + " closed"); },
       .on_progress_dropped =
           [&](Exchange& e, uint64_t stream) {
             events.push_back(std::to_string(e.id()) + " dropped " + std::to_string(stream));
           },
       .on_input_ended = [&] { events.push_back("ended"); }});
  LineExchange exchange(3);
  Message message;
  message.method = "ping";
  dispatcher.OnMessage(exchange, message);
  dispatcher.OnProgressDropped(exchange, 9);
  dispatcher.OnExchangeClosed(exchange);
  dispatcher.OnInputEnded();
  CHECK(events == std::vector<std::string>{"3 ping", "3 dropped 9", "3 closed", "ended"});
}

TEST_CASE("a function dispatcher without functions ignores every event", "[transport]") {
  FunctionDispatcher dispatcher({});
  LineExchange exchange(1);
  dispatcher.OnMessage(exchange, Message());
  dispatcher.OnExchangeClosed(exchange);
  dispatcher.OnProgressDropped(exchange, 1);
  dispatcher.OnInputEnded();
  CHECK(exchange.lines.empty());
}

}  // namespace
}  // namespace keel::transport_boundary_test
