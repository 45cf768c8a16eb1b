#include "server/trace/otlp_span_builder.h"

#include <algorithm>
#include <string_view>

namespace keel {
namespace {

constexpr const char* kAttemptSpanName = "keel.attempt";

// Record attribute names that are not OTel registry names, and their keel.* form.
constexpr std::pair<const char*, const char*> kRenames[] = {
    {"retry.attempt", "keel.retry.attempt"},
    {"idempotency.key", "keel.idempotency.key"},
    {"idempotency.ledger", "keel.idempotency.ledger"},
    {"task.id", "keel.task.id"},
    {"outcome", "keel.outcome"},
    {"duration_ms", "keel.duration_ms"},
    {"timeout.kind", "keel.timeout.kind"},
};

std::string Text(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The span name the MCP conventions give: "{mcp.method.name} {target}", the target being
// the tool (or prompt) when there is one.
std::string SpanName(const Json& attributes) {
  std::string name = Text(attributes, "mcp.method.name");
  if (name.empty()) name = "tools/call";
  std::string target = Text(attributes, "gen_ai.tool.name");
  if (target.empty()) target = Text(attributes, "gen_ai.prompt.name");
  return target.empty() ? name : name + " " + target;
}

// A call made for another method (a resource read, a prompt, a completion computed by an
// internal tool call): the span says that method, and the tool under keel.*. Appends the
// names it removed to *omitted.
void ApplyMethodHint(const Json& hints, Json& attributes, std::vector<std::string>* omitted) {
  const std::string method = Text(hints, "mcp.method.name");
  if (method.empty() || method == "tools/call") return;
  attributes["mcp.method.name"] = method;
  attributes["keel.tool.name"] = attributes.value("gen_ai.tool.name", "");
  for (const char* key : {"gen_ai.tool.name", "gen_ai.operation.name"}) {
    attributes.erase(key);
    omitted->emplace_back(key);
  }
}

}  // namespace

Json OtlpAttributeNames(const Json& attributes) {
  Json out = attributes.is_object() ? attributes : Json::object();
  for (const auto& [from, to] : kRenames) {
    const auto it = out.find(from);
    if (it == out.end()) continue;
    Json value = std::move(*it);
    out.erase(from);
    out[to] = std::move(value);
  }
  return out;
}

OtlpSpan* OtlpSpanBuilder::Open(const std::string& span_id) {
  const auto it = open_.find(span_id);
  return it == open_.end() ? nullptr : &it->second;
}

void OtlpSpanBuilder::Start(const TraceEvent& event, int64_t unix_ns, SpanKind kind) {
  if (open_.size() >= kMaxOpenSpans || open_.count(event.span_id) != 0) {
    ++dropped_;
    return;
  }
  OtlpSpan span;
  span.trace_id = event.trace_id;
  span.span_id = event.span_id;
  span.parent_span_id = event.parent_span_id;
  span.kind = kind;
  span.start_unix_ns = unix_ns;
  span.attributes = OtlpAttributeNames(event.attributes);
  std::vector<std::string> omitted;
  if (event.event == "tool.call.start") {
    ApplyMethodHint(event.otlp, span.attributes, &omitted);
    if (event.otlp.is_object()) {
      for (const char* key : {"mcp.session.id", "jsonrpc.request.id"}) {
        const std::string value = Text(event.otlp, key);
        if (!value.empty()) span.attributes[key] = value;
      }
    }
    span.name = SpanName(span.attributes);
  } else {
    span.name = kAttemptSpanName;
    // An attempt repeats none of its call's attributes but the ones that name it.
    if (const OtlpSpan* parent = Open(span.parent_span_id)) {
      for (const auto& [key, value] : parent->attributes.items()) {
        if (key == "keel.call.id" || key == "gen_ai.tool.name") continue;
        const auto it = span.attributes.find(key);
        if (it != span.attributes.end() && *it == value) {
          span.attributes.erase(it);
          omitted.push_back(key);
        }
      }
    }
  }
  if (!omitted.empty()) omitted_[span.span_id] = std::move(omitted);
  open_.emplace(span.span_id, std::move(span));
}

std::vector<OtlpSpan> OtlpSpanBuilder::Finish(const TraceEvent& event, int64_t unix_ns) {
  const auto it = open_.find(event.span_id);
  if (it == open_.end()) {
    ++dropped_;
    return {};
  }
  OtlpSpan span = std::move(it->second);
  open_.erase(it);
  std::vector<std::string> omitted;
  if (const auto left_out = omitted_.find(event.span_id); left_out != omitted_.end()) {
    omitted = std::move(left_out->second);
    omitted_.erase(left_out);
  }
  span.end_unix_ns = unix_ns;
  const Json ended = OtlpAttributeNames(event.attributes);
  for (const auto& [key, value] : ended.items()) {
    // The call's own attributes were set at its start; the end adds what it learned.
    if (span.attributes.contains(key) ||
        std::find(omitted.begin(), omitted.end(), key) != omitted.end()) {
      continue;
    }
    span.attributes[key] = value;
  }
  const std::string outcome = Text(span.attributes, "keel.outcome");
  if (outcome == "cancelled") {
    span.events.push_back(OtlpEvent{unix_ns, "keel.cancelled", Json::object()});
    if (const std::string reason = Text(ended, "keel.reason"); !reason.empty()) {
      span.events.back().attributes["keel.reason"] = reason;
    }
  }
  const bool call = span.name != kAttemptSpanName;
  if (call && (outcome == "error" || outcome == "timeout")) {
    const std::string reason = Text(span.attributes, "keel.reason");
    if (reason.rfind("server", 0) == 0) {
      // Shut down: answered with a JSON-RPC internal error (RequestCoordinator::ShutDownAll).
      span.attributes["error.type"] = "-32603";
      span.attributes["rpc.response.status_code"] = "-32603";
    } else {
      span.attributes["error.type"] = "tool_error";  // a CallToolResult with isError
    }
    span.status = SpanStatus::kError;
    span.status_message = reason;
  } else if (!call && outcome == "error") {
    span.status = SpanStatus::kError;
    span.status_message = Text(span.attributes, "error.type");
  }
  std::vector<OtlpSpan> done;
  done.push_back(std::move(span));
  return done;
}

std::vector<OtlpSpan> OtlpSpanBuilder::Add(const TraceEvent& event, int64_t unix_ns) {
  const std::string_view name = event.event;
  if (name == "tool.call.start") {
    // A task's work answers no request (its tools/call was answered with the task): it is
    // traced as an internal span, and only requests count as SERVER spans.
    const bool request = event.attributes.contains("jsonrpc.request.id");
    Start(event, unix_ns, request ? SpanKind::kServer : SpanKind::kInternal);
    return {};
  }
  if (name == "tool.attempt.start") {
    Start(event, unix_ns, SpanKind::kInternal);
    return {};
  }
  if (name == "tool.call.end" || name == "tool.attempt.end") return Finish(event, unix_ns);
  // An event: on the attempt whose span it is, else on the call (its parent).
  OtlpSpan* span = Open(event.span_id);
  if (span == nullptr) span = Open(event.parent_span_id);
  if (span == nullptr) {
    ++dropped_;
    return {};
  }
  Json attributes = OtlpAttributeNames(event.attributes);
  // The event repeats none of the call's attributes: they are on its span already.
  for (const auto& [key, value] : span->attributes.items()) {
    const auto it = attributes.find(key);
    if (it != attributes.end() && *it == value) attributes.erase(it);
  }
  span->events.push_back(OtlpEvent{unix_ns, "keel." + event.event, std::move(attributes)});
  return {};
}

}  // namespace keel
