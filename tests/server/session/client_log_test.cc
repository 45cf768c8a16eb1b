// ClientLog: MCP logging notifications honour the client's level and a rate limit on the
// injected clock.
#include "server/session/client_log.h"

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"

namespace keel::client_log_test {
namespace {

TEST_CASE("no log notification is sent before the client sets a level") {
  RecordingSink sink;
  FakeClock clock;
  ClientLog log(sink, clock);
  log.Log(LoggingLevel::kEmergency, "keel", "hello");
  CHECK(sink.messages().empty());
}

TEST_CASE("messages below the client's level are not sent, those at or above are") {
  RecordingSink sink;
  FakeClock clock;
  ClientLog log(sink, clock);
  log.SetLevel(LoggingLevel::kWarning);
  log.Log(LoggingLevel::kInfo, "keel", "quiet");
  log.Log(LoggingLevel::kWarning, "keel", "loud");
  log.Log(LoggingLevel::kError, "keel", "louder");
  REQUIRE(sink.messages().size() == 2);
  CHECK(sink.messages()[0]["method"] == "notifications/message");
  CHECK(sink.messages()[0]["params"]["level"] == "warning");
  CHECK(sink.messages()[0]["params"]["logger"] == "keel");
  CHECK(sink.messages()[1]["params"]["data"] == "louder");
}

TEST_CASE("a burst beyond the rate limit is dropped and the budget refills with time") {
  RecordingSink sink;
  FakeClock clock;
  ClientLog log(sink, clock);
  log.SetLevel(LoggingLevel::kDebug);
  for (int i = 0; i < 50; ++i) log.Log(LoggingLevel::kInfo, "keel", i);
  CHECK(sink.messages().size() == static_cast<size_t>(ClientLog::kBurst));
  CHECK(log.dropped() == 50 - static_cast<uint64_t>(ClientLog::kBurst));
  clock.Advance(Millis(1000));
  for (int i = 0; i < 50; ++i) log.Log(LoggingLevel::kInfo, "keel", i);
  CHECK(sink.messages().size() == static_cast<size_t>(ClientLog::kBurst + ClientLog::kPerSecond));
}

TEST_CASE("log levels parse by their RFC 5424 names only") {
  CHECK(ParseLoggingLevel("debug") == LoggingLevel::kDebug);
  CHECK(ParseLoggingLevel("emergency") == LoggingLevel::kEmergency);
  CHECK_FALSE(ParseLoggingLevel("warn").has_value());
  CHECK_FALSE(ParseLoggingLevel("DEBUG").has_value());
  CHECK(LoggingLevelName(LoggingLevel::kNotice) == "notice");
}

}  // namespace
}  // namespace keel::client_log_test
