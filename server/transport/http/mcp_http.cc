#include "server/transport/http/mcp_http.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "protocol/http_headers.h"
#include "protocol/json_rpc.h"
#include "protocol/mcp_envelope.h"
#include "protocol/mcp_error.h"
#include "protocol/mcp_version.h"
#include "server/runtime/random_hex.h"
#include "server/transport/inbound.h"

namespace keel {

namespace {

constexpr const char* kJson = "application/json";

// Collects what DecodeInbound answers for a body it cannot decode.
class CaptureSink final : public OutputSink {
 public:
  void SendResponse(std::string line) override { line_ = std::move(line); }
  void SendProgress(uint64_t, std::string) override {}
  void DiscardProgress(uint64_t) override {}
  void SendLog(std::string) override {}
  const std::string& line() const { return line_; }

 private:
  std::string line_;
};

void RespondError(HttpCall& call, int status, const std::optional<Json>& id, int code,
                  std::string message, Json data = Json()) {
  call.Respond(status, kJson,
               EncodeRpcError(id, RpcError{code, std::move(message), std::move(data)}));
}

std::optional<Json> IdOf(const Message& message) {
  if (message.kind == MessageKind::kRequest) return message.id;
  return std::nullopt;
}

// The envelope's required keys are there with the right types (mcp_envelope.h rule 2a).
bool EnvelopeComplete(const Json& params) {
  if (!params.is_object()) return false;
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return false;
  const auto version = meta->find(kMetaProtocolVersion);
  const auto caps = meta->find(kMetaClientCapabilities);
  return version != meta->end() && version->is_string() && !version->get<std::string>().empty() &&
         caps != meta->end() && caps->is_object();
}

bool AskedToStream(const Json& params) {
  if (!params.is_object()) return false;
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return false;
  return meta->contains("progressToken") || meta->contains(kMetaLogLevel);
}

// What the client's Accept takes: JSON, SSE. No Accept at all takes both.
std::pair<bool, bool> Accepts(const HttpRequest& request) {
  const auto accept = request.Header("accept");
  if (!accept) return {true, true};
  const std::string a = AsciiLower(*accept);
  const bool any = a.find("*/*") != std::string::npos;
  const bool json = any || a.find("application/json") != std::string::npos ||
                    a.find("application/*") != std::string::npos;
  const bool sse = any || a.find("text/event-stream") != std::string::npos;
  return {json, sse};
}

}  // namespace

McpHttpTransport::McpHttpTransport(EventLoop& loop, McpHttpOptions options, Dispatcher& dispatcher,
                                   SchemaFn schema, PeerEndedFn peer_ended)
    : loop_(loop),
      options_(std::move(options)),
      dispatcher_(dispatcher),
      schema_(std::move(schema)),
      peer_ended_(std::move(peer_ended)),
      server_(loop, options_.server, *this) {}

McpHttpTransport::~McpHttpTransport() {
  if (keepalive_timer_) loop_.CancelTimer(*keepalive_timer_);
  for (auto& [id, exchange] : exchanges_) exchange->Detach();
}

void McpHttpTransport::StopReading() {
  accepting_ = false;
  server_.StopAccepting();
}

bool McpHttpTransport::FlushBlocking(TimePoint deadline) {
  server_.DrainUntil(deadline);
  return server_.calls() == 0;
}

OutputSink* McpHttpTransport::Find(ExchangeId id) {
  const auto it = exchanges_.find(id);
  if (it == exchanges_.end() || it->second->closed()) return nullptr;
  return it->second.get();
}

void McpHttpTransport::OnRequest(HttpCall& call, const HttpRequest& request) {
  if (request.path != options_.path) {
    call.Respond(404, "text/plain", "not found: the MCP endpoint is " + options_.path + "\n");
    return;
  }
  if (GuardVerdict verdict = CheckAccess(request, options_.guard); verdict.status != 0) {
    spdlog::info("http: refused {} from {}: {}", request.method, request.client, verdict.reason);
    call.Respond(verdict.status, "text/plain", verdict.reason + "\n", std::move(verdict.headers));
    return;
  }
  if (request.method == "POST") return OnPost(call, request);
  if (request.method == "DELETE") return OnDelete(call, request);
  call.Respond(405, "text/plain", "method not allowed: POST a JSON-RPC message\n",
               {{"Allow", "POST, DELETE"}});
}

void McpHttpTransport::OnDelete(HttpCall& call, const HttpRequest& request) {
  const auto id = request.Header("mcp-session-id");
  if (!id) {
    call.Respond(405, "text/plain", "no session to end: keel's modern endpoint is stateless\n",
                 {{"Allow", "POST"}});
    return;
  }
  if (sessions_.count(std::string(*id)) == 0) {
    call.Respond(404, "text/plain", "unknown session\n");
    return;
  }
  EndSession(std::string(*id));
  call.Respond(204, "", "");
}

void McpHttpTransport::OnPost(HttpCall& call, const HttpRequest& request) {
  Accepted accepts;
  std::optional<Message> decoded = ReadPost(call, request, &accepts);
  if (!decoded) return;
  Message& message = *decoded;
  const auto header_version = request.Header("mcp-protocol-version");
  const bool modern = message.kind != MessageKind::kResponse &&
                      (HasModernEnvelope(message.params) || message.method == "server/discover" ||
                       (header_version &&
                        DecodeHeaderValue(*header_version) == std::string(kModernProtocolVersion)));
  Route route;  // modern: the exchange is its own peer
  if (modern) {
    if (message.kind == MessageKind::kRequest && !CheckModern(call, request, message)) return;
  } else if (std::optional<Route> legacy = RouteLegacy(call, request, message)) {
    route = std::move(*legacy);
  } else {
    return;
  }
  if (message.kind != MessageKind::kRequest) {
    // Invariant 4: delivered with an exchange of their own that nothing answers on.
    HttpExchange::Options quiet;
    quiet.modern = modern;
    HttpExchange exchange(next_id_++, route.peer, nullptr, quiet);
    call.Respond(202, "", "");
    dispatcher_.OnMessage(exchange, std::move(message));
    return;
  }
  Deliver(call, request, std::move(message), modern, route, accepts);
}

std::optional<Message> McpHttpTransport::ReadPost(HttpCall& call, const HttpRequest& request,
                                                  Accepted* accepts) {
  const auto content_type = request.Header("content-type");
  if (!content_type || AsciiLower(*content_type).find("application/json") == std::string::npos) {
    call.Respond(415, "text/plain", "the body must be application/json\n");
    return std::nullopt;
  }
  std::tie(accepts->json, accepts->sse) = Accepts(request);
  if (!accepts->json && !accepts->sse) {
    call.Respond(406, "text/plain", "Accept must include application/json or text/event-stream\n");
    return std::nullopt;
  }
  CaptureSink capture;
  std::optional<Message> decoded = DecodeInbound(request.body, capture);
  if (decoded) return decoded;
  if (capture.line().empty()) {
    RespondError(call, 400, std::nullopt, kInvalidRequest, "Invalid Request: empty body");
  } else {
    call.Respond(400, kJson, capture.line());
  }
  return std::nullopt;
}

bool McpHttpTransport::CheckModern(HttpCall& call, const HttpRequest& request,
                                   const Message& message) {
  if (!EnvelopeComplete(message.params)) {
    // mcp_envelope.h rule 2a, before the headers (the digest's order).
    const Decoded<ModernEnvelope> envelope = DecodeModernEnvelope(message.params);
    const RpcError error =
        envelope.ok() ? RpcError{kInvalidParams, "Invalid params: _meta", {}} : envelope.error();
    call.Respond(400, kJson, EncodeRpcError(message.id, error));
    return false;
  }
  const Json* schema = nullptr;
  if (message.method == "tools/call" && message.params.is_object()) {
    const auto name = message.params.find("name");
    if (name != message.params.end() && name->is_string()) {
      schema = schema_(name->get<std::string>());
    }
  }
  const auto lookup = [&request](std::string_view name) { return request.Header(name); };
  if (auto mismatch = CheckRequestHeaders(lookup, message.method, message.params, schema)) {
    call.Respond(400, kJson, EncodeRpcError(message.id, *mismatch));
    return false;
  }
  return true;
}

std::optional<McpHttpTransport::Route> McpHttpTransport::RouteLegacy(HttpCall& call,
                                                                     const HttpRequest& request,
                                                                     const Message& message) {
  if (const auto sid = request.Header("mcp-session-id")) {
    const auto it = sessions_.find(std::string(*sid));
    if (it == sessions_.end()) {
      RespondError(call, 404, IdOf(message), kInvalidRequest,
                   "Session not found: start a new one with initialize");
      return std::nullopt;
    }
    Touch(it->second);
    return Route{it->second.peer, false, {}};
  }
  if (message.kind == MessageKind::kRequest && message.method == "initialize") {
    return Route{next_id_++, true, RandomHex(16)};
  }
  RespondError(call, 400, IdOf(message), kInvalidRequest,
               "Bad Request: Mcp-Session-Id header required (initialize first), or the "
               "2026-07-28 request envelope in _meta");
  return std::nullopt;
}

void McpHttpTransport::Deliver(HttpCall& call, const HttpRequest& request, Message message,
                               bool modern, const Route& route, Accepted accepts) {
  HttpExchange::Options form;
  form.modern = modern;
  form.stream_bytes = options_.stream_bytes;
  form.stream = accepts.sse &&
                ((message.method == "tools/call" && (!modern || AskedToStream(message.params))) ||
                 (modern && message.method == "subscriptions/listen"));
  if (!accepts.json) form.stream = true;
  HttpExchange& exchange = NewExchange(call, route.peer, std::move(form));
  // Who it is for --max-inflight-per-client: its session, or its address (a modern client
  // has no other identity).
  exchange.set_client(modern ? ClientOfAddress(request.client) : exchange.peer());
  if (route.minted) sessions_[route.session_id] = Session{exchange.peer(), false, {}};
  dispatcher_.OnMessage(exchange, std::move(message));
  if (route.minted) AdmitSession(exchange, route.session_id);
  exchange.Begin();
  if (exchange.streaming() && !keepalive_timer_ && options_.sse_keepalive > Duration::zero()) {
    keepalive_timer_ =
        loop_.AddTimer(loop_.clock().Now() + options_.sse_keepalive, [this] { KeepAliveTick(); });
  }
}

void McpHttpTransport::AdmitSession(HttpExchange& exchange, const std::string& session_id) {
  if (exchange.answer_is_error()) {  // initialize refused: no session
    sessions_.erase(session_id);
    if (peer_ended_) peer_ended_(exchange.peer());
    return;
  }
  exchange.AddHeader("Mcp-Session-Id", session_id);
  lru_.push_back(session_id);
  Session& session = sessions_[session_id];
  session.age = std::prev(lru_.end());
  session.aged = true;
  while (sessions_.size() > options_.max_sessions && !lru_.empty()) EndSession(lru_.front());
}

HttpExchange& McpHttpTransport::NewExchange(HttpCall& call, PeerId peer,
                                            HttpExchange::Options options) {
  const ExchangeId id = next_id_++;
  options.on_progress_dropped = [this, id](uint64_t stream) {
    const auto it = exchanges_.find(id);
    if (it != exchanges_.end()) dispatcher_.OnProgressDropped(*it->second, stream);
  };
  auto exchange = std::make_unique<HttpExchange>(id, peer, &call, std::move(options));
  HttpExchange& ref = *exchange;
  exchanges_.emplace(id, std::move(exchange));
  by_call_[call.id()] = id;
  return ref;
}

void McpHttpTransport::OnCallEnded(HttpCall& call, bool completed) {
  const auto link = by_call_.find(call.id());
  if (link == by_call_.end()) return;
  const ExchangeId id = link->second;
  by_call_.erase(link);
  const auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return;
  std::unique_ptr<HttpExchange> exchange = std::move(it->second);
  exchanges_.erase(it);
  exchange->Detach();
  if (completed || !exchange->MarkClosed()) return;
  // Invariant 6: only a modern request is cancelled by its client leaving.
  if (exchange->modern() && !exchange->answered()) dispatcher_.OnExchangeClosed(*exchange);
}

uint64_t McpHttpTransport::ClientOfAddress(const std::string& address) {
  if (const auto it = clients_.find(address); it != clients_.end()) return it->second;
  // Bounded: past the cap the table starts over (an address may then count under a new id
  // next to its calls still in flight under the old one, for as long as those run).
  if (clients_.size() >= kMaxClientAddresses) clients_.clear();
  const uint64_t id = next_id_++;
  clients_.emplace(address, id);
  return id;
}

void McpHttpTransport::EndSession(const std::string& id) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  const PeerId peer = it->second.peer;
  if (it->second.aged) lru_.erase(it->second.age);
  sessions_.erase(it);
  if (peer_ended_) peer_ended_(peer);
}

void McpHttpTransport::Touch(Session& session) {
  if (!session.aged) return;
  lru_.splice(lru_.end(), lru_, session.age);
}

void McpHttpTransport::KeepAliveTick() {
  keepalive_timer_.reset();
  bool any = false;
  for (auto& [id, exchange] : exchanges_) {
    if (exchange->streaming() && !exchange->answered()) {
      exchange->KeepAlive();
      any = true;
    }
  }
  if (any) {
    keepalive_timer_ =
        loop_.AddTimer(loop_.clock().Now() + options_.sse_keepalive, [this] { KeepAliveTick(); });
  }
}

}  // namespace keel
