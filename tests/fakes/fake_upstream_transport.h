// FakeUpstreamTransport: an UpstreamTransport in memory, for UpstreamClient tests. It records
// every message keel sends (Send) and every Abandon, and lets the test play the upstream:
// Inject delivers a message as the transport's on_message would, Close ends the connection
// as on_closed would (once; later Sends fail). Refuse() makes Send fail with a reason, as a
// full queue does. MakeFakeUpstream() wires one to a new UpstreamClient.
// Header-only. The test thread plays the transport's thread: Inject and Close run the events
// on the caller's thread, one at a time (the transport contract). Send, Abandon and the
// accessors may be called from any thread.
// Invariant: on_closed runs at most once, and nothing is delivered after it.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/upstream/upstream_client.h"
#include "server/upstream/upstream_transport.h"

namespace keel {

class FakeUpstreamTransport final : public UpstreamTransport {
 public:
  explicit FakeUpstreamTransport(UpstreamEvents events) : events_(std::move(events)) {}

  bool Send(const Json& message, std::string* why) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) {
      *why = "the fake connection is closed";
      return false;
    }
    if (!refusal_.empty()) {
      *why = refusal_;
      return false;
    }
    sent_.push_back(message);
    return true;
  }
  void Abandon(const Json& id) override {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_.push_back(id);
  }
  void Shutdown(Duration grace) override {
    (void)grace;
    Close("shut down");
  }

  // The upstream's side.
  void Inject(Json message, const Json& related = Json()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
    }
    events_.on_message(std::move(message), related);
  }
  void Close(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
      closed_ = true;
    }
    events_.on_closed(why);
  }
  // Send fails with `why` from now on (empty: sends go through again).
  void Refuse(std::string why) {
    std::lock_guard<std::mutex> lock(mu_);
    refusal_ = std::move(why);
  }

  std::vector<Json> sent() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }
  // The last message sent; null when none was.
  Json last_sent() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_.empty() ? Json() : sent_.back();
  }
  std::vector<Json> abandoned() const {
    std::lock_guard<std::mutex> lock(mu_);
    return abandoned_;
  }

 private:
  UpstreamEvents events_;
  mutable std::mutex mu_;
  std::vector<Json> sent_;       // guarded by mu_
  std::vector<Json> abandoned_;  // guarded by mu_
  std::string refusal_;          // guarded by mu_
  bool closed_ = false;          // guarded by mu_
};

// An UpstreamClient attached to a FakeUpstreamTransport it owns; `wire` stays valid as long
// as `client` does.
struct FakeUpstream {
  std::unique_ptr<UpstreamClient> client;
  FakeUpstreamTransport* wire = nullptr;
};

inline FakeUpstream MakeFakeUpstream(UpstreamClient::Handlers handlers = {}) {
  FakeUpstream fake;
  fake.client = std::make_unique<UpstreamClient>(std::move(handlers));
  auto transport = std::make_unique<FakeUpstreamTransport>(fake.client->Events());
  fake.wire = transport.get();
  fake.client->Attach(std::move(transport));
  return fake;
}

// Upstream messages, as JSON-RPC 2.0 objects.
inline Json ResultFromUpstream(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}
inline Json ErrorFromUpstream(const Json& id, int code, const std::string& message) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}
inline Json AskFromUpstream(const Json& id, const std::string& method,
                            Json params = Json::object()) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}
inline Json NotificationFromUpstream(const std::string& method, Json params) {
  return Json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

}  // namespace keel
