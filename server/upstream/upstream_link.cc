#include "server/upstream/upstream_link.h"

#include <algorithm>
#include <deque>
#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "server/input/input_round.h"
#include "server/runtime/random_hex.h"
#include "server/upstream/http_upstream.h"
#include "server/upstream/reconnect_backoff.h"

namespace keel {
namespace {

constexpr const char* kModernVersion = "2026-07-28";
constexpr const char* kLegacyVersion = "2025-11-25";
constexpr int kMaxListPages = 100;

// What keel can pass on to its clients: their questions (elicitation, sampling) through
// MRTR or server-to-client requests. Roots are not declared: keel has none of its own, and a
// server told "no roots" may narrow what it serves (server-filesystem does).
Json KeelClientCapabilities() {
  return Json{{"elicitation", Json::object()}, {"sampling", Json::object()}};
}

UpstreamOptions WithReconnectId(UpstreamOptions options) {
  if (options.reconnect_id == 0) options.reconnect_id = RandomReconnectId();
  return options;
}

Json KeelClientInfo() { return Json{{"name", "keel"}, {"version", KEEL_VERSION}}; }

Json ModernEnvelope() {
  return Json{{"io.modelcontextprotocol/protocolVersion", kModernVersion},
              {"io.modelcontextprotocol/clientCapabilities", KeelClientCapabilities()},
              {"io.modelcontextprotocol/clientInfo", KeelClientInfo()}};
}

std::string ErrorText(const Json& answer) {
  const Json& error = answer["error"];
  if (!error.is_object()) return answer.dump();
  return std::to_string(error.value("code", 0)) + " " + error.value("message", std::string());
}

}  // namespace

UpstreamLink::UpstreamLink(UpstreamOptions options)
    : options_(WithReconnectId(std::move(options))) {}

UpstreamLink::~UpstreamLink() { Shutdown(); }

std::shared_ptr<UpstreamClient> UpstreamLink::Connect(std::string* error) {
  // The handlers name the client they belong to, which exists only after them.
  auto self = std::make_shared<const UpstreamClient*>(nullptr);
  UpstreamClient::Handlers handlers;
  handlers.on_notification = [this](const std::string& method, const Json& params) {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    if (on_notification_) on_notification_(method, params);
  };
  handlers.on_closed = [this, self](const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_.get() != *self) return;
    if (stopping_) {
      spdlog::info("the upstream server {}", why);
      return;
    }
    spdlog::warn("the upstream server {}", why);
    instance_ended_ = true;
    cv_.notify_all();
  };
  auto client = std::make_shared<UpstreamClient>(std::move(handlers));
  *self = client.get();
  std::unique_ptr<UpstreamTransport> transport = MakeTransport(*client, error);
  if (!transport) return nullptr;
  client->Attach(std::move(transport));
  const TimePoint deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  UpstreamLists lists;
  if (!Handshake(*client, deadline, error) || !ReadLists(*client, deadline, &lists, error)) {
    client->Shutdown(Duration::zero());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  lists_ = std::move(lists);
  return client;
}

std::unique_ptr<UpstreamTransport> UpstreamLink::MakeTransport(UpstreamClient& client,
                                                               std::string* error) {
  std::string why;
  if (!options_.url.empty()) {
    UpstreamEndpoint endpoint;
    endpoint.url = options_.url;
    endpoint.headers = options_.headers;
    endpoint.max_line_bytes = options_.command.max_line_bytes;
    endpoint.max_queued_bytes = options_.command.max_queued_bytes;
    endpoint.reconnect_id = options_.reconnect_id;
    std::unique_ptr<HttpUpstream> http = HttpUpstream::Start(endpoint, client.Events(), &why);
    if (!http) {
      *error = "cannot connect to " + options_.url + ": " + why;
      return nullptr;
    }
    spdlog::info("upstream server at {}", http->shown_url());
    return http;
  }
  std::unique_ptr<StdioUpstream> stdio =
      StdioUpstream::Start(options_.command, client.Events(), &why);
  if (!stdio) {
    *error = "cannot start " + options_.command.argv[0] + ": " + why;
    return nullptr;
  }
  spdlog::info("upstream server started (pid {})", stdio->pid());
  return stdio;
}

bool UpstreamLink::Handshake(UpstreamClient& client, TimePoint deadline, std::string* error) {
  std::string why;
  const bool probe = !era_known_ && options_.protocol != "legacy" && !skip_probe_;
  const bool modern =
      era_known_ ? info_.era == UpstreamEra::kModern : options_.protocol == "modern";
  if (probe || modern) {
    std::optional<Json> found =
        client.Request("server/discover", Json{{"_meta", ModernEnvelope()}}, deadline, stop_, &why);
    if (!found) {
      probe_lost_ = client.closed();
      *error = "the upstream did not answer server/discover: " + why;
      return false;
    }
    const Json versions = found->value("supportedVersions", Json());
    const bool speaks =
        !found->contains("error") && versions.is_array() &&
        std::find(versions.begin(), versions.end(), kModernVersion) != versions.end();
    if (speaks) {
      client.set_envelope(ModernEnvelope());
      if (!era_known_) {
        info_.era = UpstreamEra::kModern;
        info_.protocol_version = kModernVersion;
        info_.capabilities = found->value("capabilities", Json::object());
        info_.instructions = found->value("instructions", std::string());
        const Json meta = found->value("_meta", Json::object());
        info_.server_info = meta.is_object()
                                ? meta.value("io.modelcontextprotocol/serverInfo", Json::object())
                                : Json::object();
        era_known_ = true;
      }
      return true;
    }
    if (modern) {
      *error =
          "the upstream does not speak " + std::string(kModernVersion) +
          " (server/discover: " + (found->contains("error") ? ErrorText(*found) : found->dump()) +
          ")";
      return false;
    }
  }
  Json params = {{"protocolVersion", kLegacyVersion},
                 {"capabilities", KeelClientCapabilities()},
                 {"clientInfo", KeelClientInfo()}};
  std::optional<Json> init = client.Request("initialize", std::move(params), deadline, stop_, &why);
  if (!init) {
    *error = "the upstream did not answer initialize: " + why;
    return false;
  }
  if (init->contains("error") || !init->value("protocolVersion", Json()).is_string()) {
    *error = "the upstream refused initialize: " +
             (init->contains("error") ? ErrorText(*init) : init->dump());
    return false;
  }
  client.Notify("notifications/initialized", Json::object());
  if (!era_known_) {
    info_.era = UpstreamEra::kLegacy;
    info_.protocol_version = (*init)["protocolVersion"].get<std::string>();
    info_.capabilities = init->value("capabilities", Json::object());
    info_.server_info = init->value("serverInfo", Json::object());
    const Json instructions = init->value("instructions", Json());
    if (instructions.is_string()) info_.instructions = instructions.get<std::string>();
    era_known_ = true;
  }
  return true;
}

bool UpstreamLink::ReadLists(UpstreamClient& client, TimePoint deadline, UpstreamLists* lists,
                             std::string* error) {
  const Json& caps = info_.capabilities;
  auto read_all = [&](const char* method, const char* member, std::vector<Json>* items) {
    Json cursor;
    for (int page = 0; page < kMaxListPages; ++page) {
      Json params = Json::object();
      if (cursor.is_string()) params["cursor"] = cursor;
      std::string why;
      std::optional<Json> result = client.Request(method, std::move(params), deadline, stop_, &why);
      if (!result) {
        *error = std::string("the upstream did not answer ") + method + ": " + why;
        return false;
      }
      if (result->contains("error")) {
        *error = std::string("the upstream refused ") + method + ": " + ErrorText(*result);
        return false;
      }
      const Json list = result->value(member, Json::array());
      if (list.is_array()) {
        for (const Json& item : list) {
          if (item.is_object()) items->push_back(item);
        }
      }
      cursor = result->value("nextCursor", Json());
      if (!cursor.is_string() || cursor.get<std::string>().empty()) return true;
    }
    spdlog::warn("upstream {}: more than {} pages; the rest is not served", method, kMaxListPages);
    return true;
  };
  if (caps.contains("tools") && !read_all("tools/list", "tools", &lists->tools)) return false;
  if (caps.contains("resources")) {
    if (!read_all("resources/list", "resources", &lists->resources)) return false;
    if (!read_all("resources/templates/list", "resourceTemplates", &lists->templates)) {
      return false;
    }
  }
  if (caps.contains("prompts") && !read_all("prompts/list", "prompts", &lists->prompts)) {
    return false;
  }
  return true;
}

bool UpstreamLink::Start(std::string* error) {
  std::shared_ptr<UpstreamClient> client = Connect(error);
  if (!client && probe_lost_ && options_.protocol == "auto") {
    // A server that died of the probe (an unknown method before initialize): once more,
    // with initialize only.
    spdlog::info("upstream: {}; trying initialize on a new instance", *error);
    error->clear();
    skip_probe_ = true;
    client = Connect(error);
  }
  if (!client) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = client;
    if (client->closed()) instance_ended_ = true;
  }
  spdlog::info("upstream server speaks {} ({} tools)", info_.protocol_version, lists_.tools.size());
  supervisor_ = std::thread([this] { Supervise(); });
  return true;
}

void UpstreamLink::set_on_notification(std::function<void(const std::string&, const Json&)> fn) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  on_notification_ = std::move(fn);
}

void UpstreamLink::set_on_lists_changed(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  on_lists_changed_ = std::move(fn);
}

void UpstreamLink::FireListsChanged() {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  if (on_lists_changed_) on_lists_changed_();
}

void UpstreamLink::RequestRelist() {
  std::lock_guard<std::mutex> lock(mu_);
  relist_ = true;
  cv_.notify_all();
}

void UpstreamLink::Subscribe(const std::string& uri) {
  std::shared_ptr<UpstreamClient> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!subscribed_.insert(uri).second) return;
    client = current_;
  }
  if (client) client->Start("resources/subscribe", Json{{"uri", uri}});
}

UpstreamLists UpstreamLink::lists() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lists_;
}

bool UpstreamLink::Relist() {
  std::shared_ptr<UpstreamClient> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    client = current_;
  }
  if (!client) return false;
  UpstreamLists lists;
  std::string error;
  if (!ReadLists(*client, std::chrono::steady_clock::now() + options_.start_timeout, &lists,
                 &error)) {
    spdlog::warn("upstream lists not read again: {}", error);
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (lists == lists_) return false;
  lists_ = std::move(lists);
  return true;
}

std::shared_ptr<UpstreamClient> UpstreamLink::Acquire(TimePoint deadline,
                                                      const CancellationToken& token,
                                                      std::string* why) {
  const CancellationToken::Registration registration = token.OnCancel([this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (stopping_) {
      *why = "keel is shutting down";
      return nullptr;
    }
    if (failed_) {
      *why = failed_why_;
      return nullptr;
    }
    // An instance's requests are lost (and it is closed) just before its on_closed hook
    // sets instance_ended_: a closed one is not in service either.
    if (current_ && !instance_ended_ && !current_->closed()) return current_;
    if (token.IsCancelled()) {
      *why = "cancelled while the upstream server restarted";
      return nullptr;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      *why = "the upstream server is restarting and did not come back in time";
      return nullptr;
    }
    if (deadline == TimePoint::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, deadline);
    }
  }
}

std::string UpstreamLink::Park(ParkedAsk parked) {
  std::string name = RandomHex(16);
  parked.parked_at = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  parked_[name] = std::move(parked);
  return name;
}

std::optional<ParkedAsk> UpstreamLink::Take(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = parked_.find(name);
  if (it == parked_.end()) return std::nullopt;
  ParkedAsk parked = std::move(it->second);
  parked_.erase(it);
  return parked;
}

void UpstreamLink::ReapParked() {
  std::vector<ParkedAsk> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = std::chrono::steady_clock::now();
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (now - it->second.parked_at < Millis(kInputStateTtlMs)) {
        ++it;
        continue;
      }
      expired.push_back(std::move(it->second));
      it = parked_.erase(it);
    }
  }
  for (ParkedAsk& parked : expired) {
    parked.client->AnswerError(parked.ask_id, kInternalError, "the client never answered");
    parked.client->Cancel(parked.request, "the client never answered the upstream's question");
  }
}

void UpstreamLink::Supervise() {
  std::deque<TimePoint> restarts;
  int failures = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait_for(lock, std::chrono::seconds(1),
                 [&] { return stopping_ || instance_ended_ || relist_; });
    lock.unlock();
    ReapParked();
    lock.lock();
    if (stopping_) return;
    if (relist_ && !instance_ended_) {
      relist_ = false;
      lock.unlock();
      if (Relist()) FireListsChanged();
      lock.lock();
      continue;
    }
    if (!instance_ended_ || failed_) continue;
    const TimePoint now = std::chrono::steady_clock::now();
    while (!restarts.empty() && now - restarts.front() > options_.restart_window) {
      restarts.pop_front();
    }
    if (static_cast<int>(restarts.size()) >= options_.max_restarts) {
      failed_ = true;
      failed_why_ = "the upstream server ended " + std::to_string(restarts.size() + 1) +
                    " times within " + std::to_string(options_.restart_window.count()) +
                    " ms; keel stopped restarting it (see keel's log)";
      spdlog::error("{}", failed_why_);
      cv_.notify_all();
      continue;
    }
    restarts.push_back(now);
    const Duration backoff = ReconnectDelay(failures + 1, options_.reconnect_id);
    if (cv_.wait_for(lock, backoff, [&] { return stopping_; })) return;
    const UpstreamLists before = lists_;
    lock.unlock();
    std::string error;
    std::shared_ptr<UpstreamClient> client = Connect(&error);
    lock.lock();
    if (stopping_) {
      lock.unlock();
      if (client) client->Shutdown(Duration::zero());
      return;
    }
    if (!client) {
      spdlog::warn("upstream restart failed: {}", error);
      ++failures;
      continue;  // instance_ended_ stays set: the next round tries again
    }
    failures = 0;
    current_ = client;
    instance_ended_ = client->closed();
    cv_.notify_all();
    spdlog::info("upstream server restarted");
    const std::set<std::string> subscribed = subscribed_;
    const bool changed = lists_ != before;
    lock.unlock();
    for (const std::string& uri : subscribed) {
      client->Start("resources/subscribe", Json{{"uri", uri}});
    }
    if (changed) FireListsChanged();
    lock.lock();
  }
}

void UpstreamLink::Shutdown() {
  std::shared_ptr<UpstreamClient> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    client = current_;
    parked_.clear();
    cv_.notify_all();
  }
  stop_.Cancel();  // a restart's handshake in progress ends now
  if (supervisor_.joinable()) supervisor_.join();
  if (client) client->Shutdown(options_.shutdown_grace);
}

}  // namespace keel
