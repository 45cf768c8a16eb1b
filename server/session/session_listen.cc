// Session: subscriptions/listen, the 2026-07-28 subscribe-and-notify pattern (invariant 12;
// reference/mcp-2026-07-28.md §7.4). keel honours toolsListChanged, and promptsListChanged,
// resourcesListChanged and resourceSubscriptions when it serves prompts or resources
// (session_surface.cc sends those); task notifications are not offered.
#include <utility>
#include <vector>

#include "protocol/json_rpc.h"
#include "server/session/session.h"
#include "server/transport/peer_id_key.h"

namespace keel {

namespace {

constexpr const char* kSubscriptionId = "io.modelcontextprotocol/subscriptionId";

}  // namespace

void Session::Listen(const RequestContext& request, const ListenRequest& listen) {
  if (shutting_down_) {
    Reply(request, Json{{"_meta", {{kSubscriptionId, request.id}}}});
    return;
  }
  const bool prompts = surface_ != nullptr && Serves(McpMethod::kListPrompts);
  const bool resources = surface_ != nullptr && Serves(McpMethod::kListResources);
  Listener listener{request.id, request.exchange, request.peer, listen.tools_list_changed};
  listener.prompts_list_changed = prompts && listen.prompts_list_changed;
  listener.resources_list_changed = resources && listen.resources_list_changed;
  if (resources) listener.resource_subscriptions = listen.resource_subscriptions;
  if (const ForwardedSurface* fw = surface_ != nullptr ? surface_->forwarded() : nullptr;
      fw != nullptr && fw->subscribe) {
    for (const std::string& uri : listener.resource_subscriptions) fw->subscribe(uri);
  }
  // The ack lists only what keel will send.
  Json honoured = Json::object();
  if (listener.tools_list_changed) honoured["toolsListChanged"] = true;
  if (listener.prompts_list_changed) honoured["promptsListChanged"] = true;
  if (listener.resources_list_changed) honoured["resourcesListChanged"] = true;
  if (!listener.resource_subscriptions.empty()) {
    honoured["resourceSubscriptions"] = listener.resource_subscriptions;
  }
  listeners_[PeerIdKey(request.peer, request.id)] = std::move(listener);
  // Never dropped (SendRequest): the ack must be the stream's first message.
  Out(request.exchange)
      .SendRequest(EncodeNotification("notifications/subscriptions/acknowledged",
                                      Json{{"_meta", {{kSubscriptionId, request.id}}},
                                           {"notifications", std::move(honoured)}}));
}

bool Session::EndListener(const Json& id, PeerId peer) {
  return listeners_.erase(PeerIdKey(peer, id)) != 0;
}

void Session::DropListeners(ExchangeId exchange, PeerId peer) {
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    const bool gone = (exchange != kNoExchange && it->second.exchange == exchange) ||
                      (peer != kNoPeer && it->second.peer == peer);
    it = gone ? listeners_.erase(it) : std::next(it);
  }
}

void Session::EndAllListeners() {
  std::vector<Listener> ending;
  for (auto& [key, listener] : listeners_) ending.push_back(std::move(listener));
  listeners_.clear();
  for (const Listener& listener : ending) {
    const RequestContext request{listener.id, listener.exchange, listener.peer,
                                 ModernWireForm(tasks_ != nullptr)};
    Reply(request, Json{{"_meta", {{kSubscriptionId, listener.id}}}});
  }
}

void Session::NotifyToolsListChanged() {
  NotifyListeners("notifications/tools/list_changed", &Listener::tools_list_changed);
  if (options_.tools_follow_upstream) {
    NotifyLegacyPeers("notifications/tools/list_changed", Json::object(), "");
  }
}

}  // namespace keel
