#include "server/session/request_spans.h"

#include "protocol/json_rpc.h"

namespace keel {
namespace {

std::optional<TraceContext> ParentOf(const Json& meta) {
  if (!meta.is_object()) return std::nullopt;
  const auto header = meta.find("traceparent");
  if (header == meta.end() || !header->is_string()) return std::nullopt;
  return ParseTraceparent(header->get_ref<const std::string&>());
}

void MarkError(OtlpSpan& span, const std::string& type, const std::string& message) {
  span.attributes["error.type"] = type;
  span.status = SpanStatus::kError;
  span.status_message = message;
}

}  // namespace

void RequestSpans::Begin(const std::string& method, const Json& id, const Json& meta,
                         const char* transport) {
  if (log_ == nullptr) return;
  Open open;
  const TraceContext context = ParentOf(meta).value_or(NewTraceContext());
  OtlpSpan& span = open.span;
  span.trace_id = context.trace_id;
  span.parent_span_id = context.parent_span_id;
  span.span_id = NewSpanId();
  span.kind = SpanKind::kServer;
  span.start_unix_ns = log_->NowUnixNs();
  span.name = method;
  span.attributes = {{"mcp.method.name", method}, {"network.transport", transport}};
  if (!id.is_null()) span.attributes["jsonrpc.request.id"] = IdKey(id);
  open.id = id;
  open_ = std::move(open);
}

void RequestSpans::NoteResult(const Json& id, const Json& result) {
  if (!open_ || open_->id != id) return;
  if (result.is_object() && result.value("isError", false) == true) {
    MarkError(open_->span, "tool_error", "the tool's result has isError");
  }
}

void RequestSpans::NoteError(const Json& id, int code, const std::string& message) {
  if (!open_ || open_->id != id) return;
  const std::string text = std::to_string(code);
  MarkError(open_->span, text, message);
  open_->span.attributes["rpc.response.status_code"] = text;
}

void RequestSpans::NoteTraced(const Json& id) {
  if (open_ && open_->id == id) open_->traced = true;
}

void RequestSpans::End(const std::string& protocol_version, const std::string& session_id,
                       bool answered) {
  if (!open_) return;
  Open open = std::move(*open_);
  open_.reset();
  if (open.traced) return;
  OtlpSpan& span = open.span;
  if (!protocol_version.empty()) span.attributes["mcp.protocol.version"] = protocol_version;
  if (!session_id.empty()) span.attributes["mcp.session.id"] = session_id;
  if (!answered) span.attributes["keel.answered_later"] = true;
  span.end_unix_ns = log_->NowUnixNs();
  log_->EmitSpan(span);
}

const std::string& RequestSpans::SessionIdOf(uint64_t peer) {
  std::string& id = session_ids_[peer];
  if (id.empty()) id = NewTraceContext().trace_id;  // 32 random hex digits
  return id;
}

}  // namespace keel
