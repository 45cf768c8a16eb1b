#include "server/upstream/upstream_tool.h"

#include <algorithm>
#include <utility>

#include "protocol/tool_result.h"
#include "server/call/idempotency_key.h"
#include "server/durable/remote_write.h"
#include "server/upstream/upstream_call.h"

namespace keel {
namespace {

constexpr const char* kKeyMeta = "dev.keel/idempotency-key";
// How long a claim stays live beyond the attempt's own time (cancel, answer, ledger writes).
constexpr int64_t kLeaseMarginMs = 5000;

// Rule 2: the client's _meta as the upstream gets it.
Json ForwardedMeta(const Json& meta) {
  Json out = Json::object();
  if (!meta.is_object()) return out;
  for (const auto& [key, value] : meta.items()) {
    if (key == kKeyMeta || key == "progressToken" ||
        key.rfind("io.modelcontextprotocol/", 0) == 0) {
      continue;
    }
    out[key] = value;
  }
  return out;
}

}  // namespace

UpstreamTool::UpstreamTool(ToolSpec spec, std::shared_ptr<UpstreamLink> link,
                           std::shared_ptr<LedgerService> ledger, UpstreamToolOptions options)
    : spec_(std::move(spec)),
      link_(std::move(link)),
      ledger_(std::move(ledger)),
      options_(options) {
  spec_.runs_on_loop = false;
  spec_.asks_for_input = true;
}

Json UpstreamTool::Attempt(ToolContext& ctx, const std::string& key) const {
  ForwardSpec forward;
  forward.method = "tools/call";
  forward.label = spec_.name;
  forward.write = IsWrite(spec_.effect);
  Json arguments = ctx.arguments().is_object() ? ctx.arguments() : Json::object();
  if (!options_.upstream_has_key) arguments.erase("idempotencyKey");
  if (!options_.upstream_has_approval_id) arguments.erase("approval_id");
  forward.meta = ForwardedMeta(ctx.meta());
  if (options_.upstream_takes_key && !key.empty()) {
    forward.meta[kKeyMeta] = key;
    if (options_.upstream_has_key) arguments["idempotencyKey"] = key;
  }
  forward.params = Json{{"name", spec_.name}, {"arguments", std::move(arguments)}};
  forward.may_ask = key.empty() || !ledger_;
  forward.upstream_task = options_.upstream_requires_task;
  return ForwardToUpstream(*link_, ctx, std::move(forward));
}

Json UpstreamTool::Call(ToolContext& ctx) {
  ctx.checkpoint();
  std::string key;
  if (IsWrite(spec_.effect)) {
    const CallIdentity& id = ctx.identity();
    if (!id.key_problem.empty()) {
      return ErrorResult("Invalid arguments for tool '" + spec_.name + "': " + id.key_problem,
                         Json{{"type", "invalid_arguments"}, {"effect", "none"}});
    }
    key = id.idempotency_key;
  }
  if (key.empty() || !ledger_) return Attempt(ctx, key);

  RemoteWriteCall call;
  call.tool = spec_.name;
  call.key = key;
  call.intent_arguments = ctx.intent_arguments();
  call.effect = spec_.effect;
  call.lease_ms = ctx.remaining().count() + kLeaseMarginMs;
  call.claim_wait = std::clamp(ctx.remaining(), Millis(1), Millis(5000));
  RemoteWriteOps ops;
  ops.run = [&] { return Attempt(ctx, key); };
  return RunRemoteWrite(*ledger_, call, ops);
}

Reconciled UpstreamTool::Reconcile(const Json& arguments, const Json& meta) {
  if (!IsWrite(spec_.effect) || !ledger_) return Reconciled{};
  const auto [key, problem] = CallKeyOf(meta, arguments);
  if (key.empty() || !problem.empty()) return Reconciled{};
  // Nothing can look an upstream write up: only what the ledger stored is known.
  return StoredOutcome(ledger_->Borrow().ledger().Lookup(spec_.name, key)).value_or(Reconciled{});
}

UpstreamSurfaceTool::UpstreamSurfaceTool(std::shared_ptr<UpstreamLink> link)
    : link_(std::move(link)) {
  spec_.name = "upstream";
  spec_.description = "keel's forwarding of resources, prompts and completion to the upstream";
  spec_.input_schema = Json{{"type", "object"}};
  spec_.effect = EffectClass::kRead;
  spec_.asks_for_input = true;
}

Json UpstreamSurfaceTool::Call(ToolContext& ctx) {
  ctx.checkpoint();
  ForwardSpec forward;
  forward.method = ctx.arguments().value("method", std::string());
  forward.params = ctx.arguments().value("params", Json::object());
  forward.params.erase("_meta");
  forward.label = forward.method;
  forward.surface = true;
  forward.meta = ForwardedMeta(ctx.meta());
  return ForwardToUpstream(*link_, ctx, std::move(forward));
}

}  // namespace keel
