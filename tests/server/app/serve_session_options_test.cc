// The Session's options for a serving keel, from the flags: every flag lands where the
// session, its coordinator and its task manager read it.
#include "server/app/serve_session_options.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "app_fixtures.h"
#include "ledger/kill_switch.h"

namespace keel::serve_session_options_test {
namespace {

using app_test::TempKeelDb;

TEST_CASE("flags map to session options") {
  TempKeelDb db;
  CliOptions& flags = db.flags();
  flags.max_inflight = 7;
  flags.page_size = 3;
  flags.shutdown_grace_ms = 900;
  flags.idle_timeout_ms = 100;
  flags.max_timeout_ms = 200;
  flags.shadow = true;
  flags.max_line_bytes = 4096;
  flags.max_tasks = 5;
  flags.task_max_ttl_ms = 60000;
  flags.task_poll_interval_ms = 250;
  flags.trace_arguments = true;
  const SessionOptions options = SessionOptionsFor(flags, "keel-1-k00000000", db.Open(), nullptr);
  CHECK(options.max_inflight == 7);
  CHECK(options.page_size == 3);
  CHECK(options.shutdown_grace == Millis(900));
  CHECK(options.call_limits.idle == Millis(100));
  CHECK(options.call_limits.max == Millis(200));
  CHECK(options.shadow);
  CHECK(options.max_line_bytes == 4096);
  CHECK(options.server_version == KEEL_VERSION);
  CHECK(options.tasks.max_tasks == 5);
  CHECK(options.tasks.max_ttl_ms == 60000);
  CHECK(options.tasks.poll_interval_ms == 250);
  CHECK(options.tasks.page_size == 3);
  CHECK(options.tasks.owner == "keel-1-k00000000");
  CHECK(options.tasks.pid == getpid());
  CHECK(options.trace == nullptr);
  CHECK(options.trace_arguments);
  CHECK_FALSE(options.client_log_level);
}

TEST_CASE("each serving keel gets its own correlation prefix") {
  TempKeelDb db;
  const SessionOptions first = SessionOptionsFor(db.flags(), "owner", db.Open(), nullptr);
  const SessionOptions second = SessionOptionsFor(db.flags(), "owner", db.Open(), nullptr);
  CHECK(first.correlation_prefix.size() == 9);
  CHECK(first.correlation_prefix[0] == 'k');
  CHECK(first.correlation_prefix != second.correlation_prefix);
}

TEST_CASE("a --client-log-level sets the level before the client asks") {
  TempKeelDb db;
  db.flags().client_log_level = "warning";
  const SessionOptions options = SessionOptionsFor(db.flags(), "owner", db.Open(), nullptr);
  CHECK(options.client_log_level == ParseLoggingLevel("warning"));
}

TEST_CASE("the session reads the kill switch from the db file on every write") {
  TempKeelDb db;
  const std::shared_ptr<LedgerService> ledger = db.Open();
  const SessionOptions options = SessionOptionsFor(db.flags(), "owner", ledger, nullptr);
  REQUIRE(options.writes_blocked);
  CHECK_FALSE(options.writes_blocked().blocked);
  SetWritesBlocked(db.Open()->Borrow().db(), true, 1000, "test");
  CHECK(options.writes_blocked().blocked);
  CHECK_FALSE(options.writes_blocked().unreadable);
}

}  // namespace
}  // namespace keel::serve_session_options_test
