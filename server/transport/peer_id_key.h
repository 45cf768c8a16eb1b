// PeerIdKey: the identity of a JSON-RPC id for maps, scoped by the peer that sent it
// (exchange.h): the same id from two peers is two keys, 7 and "7" from one peer are two keys.
// Every map of requests keyed by id (the coordinator's live calls, the TaskManager's pending
// requests, Session::IdInUse) uses it. A pure function; any thread.
#pragma once

#include <string>

#include "protocol/json_rpc.h"
#include "server/transport/exchange.h"

namespace keel {

inline std::string PeerIdKey(PeerId peer, const Json& id) {
  return std::to_string(peer) + "/" + IdKey(id);
}

}  // namespace keel
