// The record -> OTLP span mapping of --trace-format otlp (ADO-3), with times given.
#include "server/trace/otlp_span_builder.h"

#include <catch2/catch.hpp>

namespace keel::otlp_span_builder_test {
namespace {

constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kClientSpan = "00f067aa0ba902b7";
constexpr const char* kCall = "1111111111111111";
constexpr const char* kAttempt1 = "2222222222222222";
constexpr const char* kAttempt2 = "3333333333333333";

Json CallAttributes() {
  return {{"mcp.method.name", "tools/call"}, {"gen_ai.operation.name", "execute_tool"},
          {"gen_ai.tool.name", "charge"},    {"keel.call.id", "k-1"},
          {"idempotency.key", "abc"},        {"network.transport", "pipe"},
          {"jsonrpc.request.id", "7"}};
}

TraceEvent Call(const char* name, Json extra = Json::object()) {
  TraceEvent event{name, "INFO", kTrace, kCall, kClientSpan, CallAttributes()};
  event.attributes.update(extra);
  return event;
}

TraceEvent Child(const char* name, const char* span, Json extra = Json::object()) {
  TraceEvent event{name, "INFO", kTrace, span, kCall, CallAttributes()};
  event.attributes.update(extra);
  return event;
}

const OtlpEvent* FindEvent(const OtlpSpan& span, const std::string& name) {
  for (const OtlpEvent& event : span.events) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

}  // namespace

TEST_CASE(
    "a retried call becomes one SERVER span with a child span per attempt and its "
    "backoff as an event",
    "[trace][ADO-3]") {
  OtlpSpanBuilder builder;
  CHECK(builder.Add(Call("tool.call.start"), 1000).empty());
  CHECK(builder.Add(Child("tool.attempt.start", kAttempt1, {{"retry.attempt", 1}}), 2000).empty());
  const auto first =
      builder.Add(Child("tool.attempt.end", kAttempt1,
                        {{"retry.attempt", 1}, {"outcome", "error"}, {"error.type", "http_503"}}),
                  3000);
  REQUIRE(first.size() == 1);
  CHECK(first[0].kind == SpanKind::kInternal);
  CHECK(first[0].parent_span_id == kCall);
  CHECK(first[0].start_unix_ns == 2000);
  CHECK(first[0].end_unix_ns == 3000);
  CHECK(first[0].status == SpanStatus::kError);
  CHECK(first[0].attributes["keel.retry.attempt"] == 1);
  CHECK_FALSE(first[0].attributes.contains("retry.attempt"));
  CHECK_FALSE(first[0].attributes.contains("mcp.method.name"));  // the call's, not repeated
  CHECK(first[0].attributes["keel.call.id"] == "k-1");

  // The backoff: a record on a fresh span whose parent is the call.
  CHECK(
      builder.Add(Child("retry.scheduled", "4444444444444444", {{"keel.retry.delay_ms", 50}}), 3500)
          .empty());
  builder.Add(Child("tool.attempt.start", kAttempt2, {{"retry.attempt", 2}}), 4000);
  builder.Add(Child("tool.attempt.end", kAttempt2, {{"retry.attempt", 2}, {"outcome", "ok"}}),
              5000);
  const auto call =
      builder.Add(Call("tool.call.end", {{"outcome", "ok"}, {"duration_ms", 5}}), 6000);
  REQUIRE(call.size() == 1);
  const OtlpSpan& span = call[0];
  CHECK(span.kind == SpanKind::kServer);
  CHECK(span.name == "tools/call charge");
  CHECK(span.trace_id == kTrace);
  CHECK(span.parent_span_id == kClientSpan);  // the client's traceparent stays the parent
  CHECK(span.start_unix_ns == 1000);
  CHECK(span.end_unix_ns == 6000);
  CHECK(span.status == SpanStatus::kUnset);
  CHECK_FALSE(span.attributes.contains("error.type"));
  CHECK(span.attributes["keel.idempotency.key"] == "abc");
  CHECK(span.attributes["keel.outcome"] == "ok");
  CHECK(span.attributes["keel.duration_ms"] == 5);
  const OtlpEvent* backoff = FindEvent(span, "keel.retry.scheduled");
  REQUIRE(backoff != nullptr);
  CHECK(backoff->time_unix_ns == 3500);
  CHECK(backoff->attributes["keel.retry.delay_ms"] == 50);
  CHECK_FALSE(backoff->attributes.contains("gen_ai.tool.name"));
  CHECK(builder.open_spans() == 0);
  CHECK(builder.dropped() == 0);
}

TEST_CASE("a call whose result has isError gets error.type tool_error and status ERROR",
          "[trace][ADO-3]") {
  OtlpSpanBuilder builder;
  builder.Add(Call("tool.call.start"), 10);
  const auto done =
      builder.Add(Call("tool.call.end", {{"outcome", "error"}, {"keel.reason", "failed"}}), 20);
  REQUIRE(done.size() == 1);
  CHECK(done[0].attributes["error.type"] == "tool_error");
  CHECK(done[0].status == SpanStatus::kError);
}

TEST_CASE("a call ended by shutdown gets the JSON-RPC error code as error.type", "[trace][ADO-3]") {
  OtlpSpanBuilder builder;
  builder.Add(Call("tool.call.start"), 10);
  const auto done = builder.Add(
      Call("tool.call.end", {{"outcome", "error"}, {"keel.reason", "server shutting down"}}), 20);
  REQUIRE(done.size() == 1);
  CHECK(done[0].attributes["error.type"] == "-32603");
  CHECK(done[0].attributes["rpc.response.status_code"] == "-32603");
}

TEST_CASE("timeouts and breaker decisions are events on the span they belong to, cancels too",
          "[trace][ADO-3]") {
  OtlpSpanBuilder builder;
  builder.Add(Call("tool.call.start"), 10);
  builder.Add(Child("tool.attempt.start", kAttempt1), 20);
  builder.Add(Child("timeout.fired", kAttempt1, {{"keel.timeout.layer", "attempt"}}), 30);
  const auto attempt =
      builder.Add(Child("tool.attempt.end", kAttempt1, {{"outcome", "cancelled"}}), 31);
  REQUIRE(attempt.size() == 1);
  const OtlpEvent* fired = FindEvent(attempt[0], "keel.timeout.fired");
  REQUIRE(fired != nullptr);
  CHECK(fired->attributes["keel.timeout.layer"] == "attempt");
  CHECK(FindEvent(attempt[0], "keel.cancelled") != nullptr);
  builder.Add(Child("breaker.rejected", "5555555555555555"), 40);
  const auto call = builder.Add(Call("tool.call.end", {{"outcome", "cancelled"}}), 50);
  REQUIRE(call.size() == 1);
  CHECK(FindEvent(call[0], "keel.breaker.rejected") != nullptr);
  CHECK(FindEvent(call[0], "keel.cancelled") != nullptr);
  CHECK(call[0].status == SpanStatus::kUnset);
}

TEST_CASE("a call made for resources/read is named and attributed as that method",
          "[trace][ADO-3]") {
  OtlpSpanBuilder builder;
  TraceEvent start = Call("tool.call.start");
  start.otlp = {{"mcp.method.name", "resources/read"}, {"mcp.session.id", "abcd"}};
  builder.Add(start, 1);
  const auto done = builder.Add(Call("tool.call.end", {{"outcome", "ok"}}), 2);
  REQUIRE(done.size() == 1);
  CHECK(done[0].name == "resources/read");
  CHECK(done[0].attributes["mcp.method.name"] == "resources/read");
  CHECK(done[0].attributes["mcp.session.id"] == "abcd");
  CHECK(done[0].attributes["keel.tool.name"] == "charge");
  CHECK_FALSE(done[0].attributes.contains("gen_ai.operation.name"));
}

TEST_CASE("a task's work, which answers no request, is an INTERNAL span", "[trace][ADO-3]") {
  OtlpSpanBuilder builder;
  TraceEvent start = Call("tool.call.start", {{"task.id", "t-1"}});
  start.attributes.erase("jsonrpc.request.id");
  builder.Add(start, 1);
  const auto done = builder.Add(Call("tool.call.end", {{"outcome", "error"}}), 2);
  REQUIRE(done.size() == 1);
  CHECK(done[0].kind == SpanKind::kInternal);
  CHECK(done[0].name == "tools/call charge");
  CHECK(done[0].attributes["keel.task.id"] == "t-1");
  CHECK(done[0].attributes["error.type"] == "tool_error");
}

TEST_CASE("records of spans that are not open are counted and skipped", "[trace][ADO-3]") {
  OtlpSpanBuilder builder;
  CHECK(builder.Add(Call("tool.call.end"), 1).empty());
  CHECK(builder.Add(Child("retry.scheduled", "6666666666666666"), 2).empty());
  CHECK(builder.dropped() == 2);
}

}  // namespace keel::otlp_span_builder_test
