// The Session's resources, prompts and completion (invariant 13; reference/
// mcp-2026-07-28.md §7): lists answered on the loop from the surface in force, and reads,
// prompt renderings and completion commands admitted as calls of the surface's internal
// tools, answered through SurfaceAnswer (EncodeCallResult). Change notifications go to
// the listen streams that asked (2026-07-28) and to subscribed legacy peers.
#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/json_rpc.h"
#include "server/session/session.h"
#include "server/surface/completion.h"

namespace keel {
namespace {

constexpr const char* kListenId = "io.modelcontextprotocol/subscriptionId";

Json ArgumentsObject(const std::map<std::string, std::string>& arguments) {
  Json object = Json::object();
  for (const auto& [name, value] : arguments) object[name] = value;
  return object;
}

// The lists a surface shows, whichever kind it is.
const std::vector<Json>& ResourceItems(const Surface& surface) {
  if (const ForwardedSurface* fw = surface.forwarded()) return fw->resources;
  return surface.resources().items();
}
const std::vector<Json>& TemplateItems(const Surface& surface) {
  if (const ForwardedSurface* fw = surface.forwarded()) return fw->templates;
  return surface.resources().template_items();
}
const std::vector<Json>& PromptItems(const Surface& surface) {
  if (const ForwardedSurface* fw = surface.forwarded()) return fw->prompts;
  return surface.prompts().items();
}
bool ServesResources(const Surface& surface) {
  if (const ForwardedSurface* fw = surface.forwarded()) return fw->serves_resources;
  return !surface.resources().empty();
}
bool ServesPrompts(const Surface& surface) {
  if (const ForwardedSurface* fw = surface.forwarded()) return fw->serves_prompts;
  return !surface.prompts().empty();
}
bool Completes(const Surface& surface) {
  if (const ForwardedSurface* fw = surface.forwarded()) return fw->completes;
  return surface.completes();
}

// A forwarded call's arguments (UpstreamSurfaceTool).
Json Forwarded(const char* method, Json params) {
  return Json{{"method", method}, {"params", std::move(params)}};
}

}  // namespace

bool Session::Serves(McpMethod method) const {
  switch (method) {
    case McpMethod::kListResources:
    case McpMethod::kListResourceTemplates:
    case McpMethod::kReadResource:
    case McpMethod::kSubscribe:
    case McpMethod::kUnsubscribe:
      return surface_ != nullptr && ServesResources(*surface_);
    case McpMethod::kListPrompts:
    case McpMethod::kGetPrompt:
      return surface_ != nullptr && ServesPrompts(*surface_);
    case McpMethod::kComplete:
      return surface_ != nullptr && Completes(*surface_);
    default:
      return true;
  }
}

void Session::DeclareSurface(ServerCapabilities& capabilities) const {
  if (options_.tools_follow_upstream) capabilities.tools_list_changed = true;
  if (surface_ == nullptr) return;
  capabilities.resources = ServesResources(*surface_);
  capabilities.resources_subscribe = capabilities.resources;
  capabilities.resources_list_changed = capabilities.resources;
  capabilities.prompts = ServesPrompts(*surface_);
  capabilities.prompts_list_changed = capabilities.prompts;
  capabilities.completions = Completes(*surface_);
}

void Session::SetSurface(std::shared_ptr<Surface> surface) {
  const std::shared_ptr<Surface> old = std::move(surface_);
  surface_ = std::move(surface);
  if (old == nullptr) return;
  const bool resources_changed = ResourceItems(*old) != ResourceItems(*surface_) ||
                                 TemplateItems(*old) != TemplateItems(*surface_);
  const bool prompts_changed = PromptItems(*old) != PromptItems(*surface_);
  retired_surfaces_.push_back(old);
  if (resources_changed) NotifyResourcesListChanged();
  if (prompts_changed) NotifyPromptsListChanged();
}

void Session::ReplyPage(const RequestContext& request, const std::vector<Json>& items,
                        size_t offset, const char* member, const char* cursor_list) {
  if (offset > items.size()) return ReplyError(request, InvalidParams("invalid cursor"));
  const size_t end = std::min(items.size(), offset + options_.page_size);
  ListItemsResult page;
  page.items.assign(items.begin() + static_cast<std::ptrdiff_t>(offset),
                    items.begin() + static_cast<std::ptrdiff_t>(end));
  if (end < items.size()) page.next_offset = end;
  if (IsModern(request.wire)) page.cache = options_.cache;
  Reply(request, ListPageToWire(page, member, cursor_list));
}

void Session::ListResources(const RequestContext& request, const ListResourcesRequest& list) {
  ReplyPage(request, ResourceItems(*surface_), list.offset, "resources", kResourcesCursor);
}

void Session::ListResourceTemplates(const RequestContext& request,
                                    const ListResourceTemplatesRequest& list) {
  ReplyPage(request, TemplateItems(*surface_), list.offset, "resourceTemplates", kTemplatesCursor);
}

void Session::ReadResource(const RequestContext& request, const ReadResourceRequest& read) {
  if (const ForwardedSurface* fw = surface_->forwarded()) {
    return AdmitCall(request, *fw->tool, Forwarded("resources/read", Json{{"uri", read.uri}}),
                     Json(), Json(), false, nullptr,
                     AnswerTarget{AnswerAs::kResource, read.uri, ""});
  }
  std::optional<ResourceSet::Read> reader = surface_->resources().Resolve(read.uri);
  if (!reader) return ReplyError(request, ResourceNotFound(request.wire, read.uri));
  AdmitCall(request, *reader->reader, std::move(reader->arguments), Json(), Json(), false, nullptr,
            AnswerTarget{AnswerAs::kResource, read.uri, reader->mime_type});
}

void Session::Subscribe(const RequestContext& request, const SubscribeRequest& subscribe) {
  LegacyPeer& peer = peers_.at(request.peer);  // a legacy method: initialized
  if (subscribe.subscribe) {
    constexpr size_t kMaxSubscriptions = 1000;
    if (peer.subscriptions.size() >= kMaxSubscriptions &&
        peer.subscriptions.count(subscribe.uri) == 0) {
      return ReplyError(request, InvalidParams("at most 1000 subscriptions per session"));
    }
    const bool first = peer.subscriptions.insert(subscribe.uri).second;
    const ForwardedSurface* fw = surface_->forwarded();
    if (first && fw != nullptr && fw->subscribe) fw->subscribe(subscribe.uri);
  } else {
    peer.subscriptions.erase(subscribe.uri);
  }
  Reply(request, Json::object());
}

void Session::ListPrompts(const RequestContext& request, const ListPromptsRequest& list) {
  ReplyPage(request, PromptItems(*surface_), list.offset, "prompts", kPromptsCursor);
}

void Session::GetPrompt(const RequestContext& request, GetPromptRequest get) {
  const PromptSet& prompts = surface_->prompts();
  const ForwardedSurface* fw = surface_->forwarded();
  Tool* tool = fw != nullptr ? fw->tool.get() : prompts.Find(get.name);
  if (tool == nullptr) {
    return ReplyError(request, InvalidParams("unknown prompt " + QuoteForError(get.name)));
  }
  std::optional<std::string> missing;
  if (fw == nullptr) missing = prompts.MissingArgument(get.name, get.arguments);
  if (missing) {
    return ReplyError(request, InvalidParams("prompt " + QuoteForError(get.name) +
                                             " needs argument " + QuoteForError(*missing)));
  }
  CallToolRequest call;
  call.name = tool->spec().name;
  call.arguments = ArgumentsObject(get.arguments);
  if (fw != nullptr) {
    call.arguments =
        Forwarded("prompts/get", Json{{"name", get.name}, {"arguments", call.arguments}});
  }
  call.input_responses = std::move(get.retry.input_responses);
  call.request_state = std::move(get.retry.request_state);
  bool refused = false;
  std::shared_ptr<const InputRound> input = BeginInput(request, tool->spec(), call, &refused);
  if (refused) return;
  if (!IsModern(request.wire) && tool->spec().asks_for_input) {
    // A legacy client is asked with requests of keel's own, as for a tools/call.
    auto legacy = std::make_shared<InputRound>();
    legacy->client_capabilities = peers_.at(request.peer).client_capabilities;
    legacy->answers = Json::object();
    legacy->server_asks = true;
    input = std::move(legacy);
  }
  AdmitCall(request, *tool, std::move(call.arguments), Json(), Json(), false, std::move(input),
            AnswerTarget{AnswerAs::kPrompt, "", ""});
}

void Session::Complete(const RequestContext& request, const CompleteRequest& complete) {
  if (const ForwardedSurface* fw = surface_->forwarded()) {
    Json ref = complete.ref == CompleteRequest::Ref::kPrompt
                   ? Json{{"type", "ref/prompt"}, {"name", complete.ref_name}}
                   : Json{{"type", "ref/resource"}, {"uri", complete.ref_name}};
    Json params = {{"ref", std::move(ref)},
                   {"argument", {{"name", complete.argument}, {"value", complete.value}}}};
    if (!complete.context.empty()) {
      params["context"] = Json{{"arguments", ArgumentsObject(complete.context)}};
    }
    return AdmitCall(request, *fw->tool, Forwarded("completion/complete", std::move(params)),
                     Json(), Json(), false, nullptr, AnswerTarget{AnswerAs::kCompletion, "", ""});
  }
  const CompletionSpec* spec = nullptr;
  if (complete.ref == CompleteRequest::Ref::kPrompt) {
    if (!surface_->prompts().HasArgument(complete.ref_name, complete.argument)) {
      return ReplyError(request,
                        InvalidParams("prompt " + QuoteForError(complete.ref_name) +
                                      " has no argument " + QuoteForError(complete.argument)));
    }
    spec = surface_->prompts().CompletionOf(complete.ref_name, complete.argument);
  } else {
    if (!surface_->resources().HasVariable(complete.ref_name, complete.argument)) {
      return ReplyError(request,
                        InvalidParams("no resource template " + QuoteForError(complete.ref_name) +
                                      " with variable " + QuoteForError(complete.argument)));
    }
    spec = surface_->resources().CompletionOf(complete.ref_name, complete.argument);
  }
  if (spec == nullptr) return Reply(request, ToWire(CompleteResult{{}, size_t{0}, false}));
  Tool* command = surface_->CompletionTool(spec);
  if (command == nullptr)
    return Reply(request, ToWire(CompleteFromList(spec->values, complete.value)));
  AdmitCall(request, *command, Json{{"argument", complete.argument}, {"value", complete.value}},
            Json(), Json(), false, nullptr, AnswerTarget{AnswerAs::kCompletion, "", ""});
}

void Session::NotifyListeners(const char* method, bool Listener::*wants, Json params) {
  size_t told = 0;
  for (const auto& [key, listener] : listeners_) {
    if (!(listener.*wants)) continue;
    Json with_id = params;
    with_id["_meta"] = {{kListenId, listener.id}};
    Out(listener.exchange).SendRequest(EncodeNotification(method, std::move(with_id)));
    ++told;
  }
  if (told > 0) spdlog::info("sent {} to {} subscription(s)", method, told);
}

void Session::NotifyLegacyPeers(const char* method, const Json& params,
                                const std::string& subscribed_uri) {
  for (const auto& [peer, legacy] : peers_) {
    if (!subscribed_uri.empty() && legacy.subscriptions.count(subscribed_uri) == 0) continue;
    // A legacy peer's own stream: the stdio connection's exchange is its peer's id; a legacy
    // HTTP session has no stream keel writes to unasked (no GET stream), so its lines drop.
    Out(static_cast<ExchangeId>(peer)).SendRequest(EncodeNotification(method, params));
  }
}

void Session::NotifyPromptsListChanged() {
  NotifyListeners("notifications/prompts/list_changed", &Listener::prompts_list_changed);
  NotifyLegacyPeers("notifications/prompts/list_changed", Json::object(), "");
}

void Session::NotifyResourcesListChanged() {
  NotifyListeners("notifications/resources/list_changed", &Listener::resources_list_changed);
  NotifyLegacyPeers("notifications/resources/list_changed", Json::object(), "");
}

void Session::NotifyResourceUpdated(const std::string& uri) {
  for (const auto& [key, listener] : listeners_) {
    const auto& uris = listener.resource_subscriptions;
    if (std::find(uris.begin(), uris.end(), uri) == uris.end()) continue;
    Out(listener.exchange)
        .SendRequest(EncodeNotification("notifications/resources/updated",
                                        Json{{"uri", uri}, {"_meta", {{kListenId, listener.id}}}}));
  }
  NotifyLegacyPeers("notifications/resources/updated", Json{{"uri", uri}}, uri);
}

void Session::OnResourceFilesChanged(const std::vector<std::string>& paths) {
  if (surface_ == nullptr) return;
  if (surface_->resources().RefreshMounts()) NotifyResourcesListChanged();
  for (const std::string& path : paths) {
    for (const std::string& uri : surface_->resources().UrisOfPath(path)) {
      NotifyResourceUpdated(uri);
    }
  }
}

}  // namespace keel
