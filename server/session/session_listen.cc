// Session: subscriptions/listen, the 2026-07-28 subscribe-and-notify pattern (invariant 12;
// reference/mcp-2026-07-28.md §7.4). keel honours toolsListChanged only: it serves no
// resources or prompts yet, and task notifications are not offered.
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

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
  listeners_[PeerIdKey(request.peer, request.id)] =
      Listener{request.id, request.exchange, request.peer, listen.tools_list_changed};
  Json honoured = Json::object();
  if (listen.tools_list_changed) honoured["toolsListChanged"] = true;
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
  size_t told = 0;
  for (const auto& [key, listener] : listeners_) {
    if (!listener.tools_list_changed) continue;
    Out(listener.exchange)
        .SendRequest(EncodeNotification("notifications/tools/list_changed",
                                        Json{{"_meta", {{kSubscriptionId, listener.id}}}}));
    ++told;
  }
  if (told > 0) spdlog::info("told {} subscription(s) that the tool list changed", told);
}

}  // namespace keel
