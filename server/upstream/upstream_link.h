// UpstreamLink: the wrapped MCP server over its life (`keel wrap`; WRAP-1, WRAP-3, WRAP-4):
// the instance in service, its handshake and lists, restarts, and shutdown.
//
//  1. Start() starts the first instance (spawns the command, or connects to the url: an
//     "instance" of an HTTP upstream is one connection, with its own handshake and, for
//     2025-11-25, its own session) and does the handshake within start_timeout: with
//     protocol "auto", server/discover first (a 2026-07-28 server answers it), and on any
//     error initialize + notifications/initialized (2025-11-25); "legacy" and "modern" skip
//     the probe. The era found then is the upstream's for good. Then it lists tools,
//     resources, resource templates and prompts (every page; what the capabilities
//     declare). A failure here is keel's start-up failure (exit 69, the reason given).
//  2. When an instance's connection ends (it exited, crashed, closed its stdout; over HTTP:
//     unreachable, or its session ended, http_upstream.h rule 3), every
//     request in flight is lost (upstream_client.h rule 5) and a new instance is started
//     after REC-2's backoff (reconnect_backoff.h: 250 ms doubling to 8 s, each in the upper
//     half of its step, jittered by reconnect_id), unless max_restarts restarts happened
//     within restart_window: then keel stops restarting and every call is answered
//     upstream_unavailable (the log says why). A new instance's lists are read again; a
//     change fires on_lists_changed.
//  3. Acquire() gives the client of the instance in service, waiting while one starts (up to
//     the call's deadline or its cancellation).
//  4. Questions parked for a client (Park/Take): an upstream request (elicitation, sampling,
//     roots) made during a call whose client must answer in a later request (MRTR) waits
//     here, with the upstream request it belongs to, for at most kInputStateTtlMs; then the
//     upstream request is cancelled.
//  5. Shutdown(): the instance is stopped as StdioUpstream::Shutdown (HttpUpstream::Shutdown)
//     says, within the grace;
//     no restart follows.
// Notifications the upstream sends outside calls go to on_notification (transport thread).
//
// Thread-safety: every member may be called from any thread; the callbacks are set before
// Start.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/runtime/cancellation.h"
#include "server/runtime/clock.h"
#include "server/upstream/stdio_upstream.h"
#include "server/upstream/upstream_client.h"

namespace keel {

enum class UpstreamEra { kLegacy, kModern };

struct UpstreamOptions {
  UpstreamCommand command;           // its max_line_bytes and max_queued_bytes bound HTTP too
  std::string url;                   // not empty: a Streamable HTTP upstream (http_upstream.h)
  std::vector<std::string> headers;  // with url: "Name: value" on every HTTP request
  std::string protocol = "auto";     // auto, legacy, modern
  Millis start_timeout{60000};
  int max_restarts = 5;
  Millis restart_window{60000};
  Duration shutdown_grace = Millis(1500);
  // REC-2's jitter (reconnect_backoff.h), for restarts and an HTTP upstream's GET stream;
  // 0: UpstreamLink draws one at random.
  uint64_t reconnect_id = 0;
};

struct UpstreamInfo {
  UpstreamEra era = UpstreamEra::kLegacy;
  std::string protocol_version;
  Json server_info;   // {name, version, ...}
  Json capabilities;  // the upstream's ServerCapabilities
  std::string instructions;
};

struct UpstreamLists {
  std::vector<Json> tools;
  std::vector<Json> resources;
  std::vector<Json> templates;
  std::vector<Json> prompts;
  bool operator==(const UpstreamLists& other) const = default;
};

// An upstream question waiting for the client (rule 4).
struct ParkedAsk {
  std::shared_ptr<UpstreamClient> client;
  std::shared_ptr<UpstreamRequest> request;  // keel's request the question belongs to
  Json ask_id;                               // the upstream's request id
  TimePoint parked_at;
};

class UpstreamLink {
 public:
  explicit UpstreamLink(UpstreamOptions options);
  ~UpstreamLink();
  UpstreamLink(const UpstreamLink&) = delete;
  UpstreamLink& operator=(const UpstreamLink&) = delete;

  // May be set (or cleared, with null) at any time; they run on the upstream's threads and
  // must only post.
  void set_on_notification(std::function<void(const std::string&, const Json&)> fn);
  void set_on_lists_changed(std::function<void()> fn);

  // Rule 1. False, with *error, when the upstream cannot be started.
  bool Start(std::string* error);
  const UpstreamInfo& info() const { return info_; }
  UpstreamLists lists() const;
  // Asks for the lists to be read again from the instance in service (after a
  // list_changed); on_lists_changed fires if they changed. Does not block.
  void RequestRelist();
  // resources/subscribe on the instance in service, and on every later one; the answer is
  // not awaited. Does not block.
  void Subscribe(const std::string& uri);

  // Rule 3. Null, with *why, when no instance can take a call.
  std::shared_ptr<UpstreamClient> Acquire(TimePoint deadline, const CancellationToken& token,
                                          std::string* why);
  // Rule 4: returns the name the client's answer comes back with.
  std::string Park(ParkedAsk parked);
  std::optional<ParkedAsk> Take(const std::string& name);

  void Shutdown();

 private:
  std::shared_ptr<UpstreamClient> Connect(std::string* error);
  std::unique_ptr<UpstreamTransport> MakeTransport(UpstreamClient& client, std::string* error);
  bool Handshake(UpstreamClient& client, TimePoint deadline, std::string* error);
  bool ReadLists(UpstreamClient& client, TimePoint deadline, UpstreamLists* lists,
                 std::string* error);
  void Supervise();
  bool Relist();
  void FireListsChanged();
  void ReapParked();

  const UpstreamOptions options_;
  UpstreamInfo info_;
  bool era_known_ = false;
  bool skip_probe_ = false;  // Start: the probe killed the first instance
  bool probe_lost_ = false;
  std::mutex hooks_mu_;
  std::function<void(const std::string&, const Json&)> on_notification_;  // hooks_mu_
  std::function<void()> on_lists_changed_;                                // hooks_mu_

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<UpstreamClient> current_;               // guarded by mu_; null while restarting
  std::vector<std::shared_ptr<UpstreamClient>> retired_;  // mu_: ended instances
  UpstreamLists lists_;                                   // mu_
  bool failed_ = false;                                   // mu_: restarts given up
  std::string failed_why_;                                // mu_
  bool stopping_ = false;                                 // mu_
  bool instance_ended_ = false;                           // mu_: current_'s connection ended
  std::map<std::string, ParkedAsk> parked_;               // mu_
  bool relist_ = false;                                   // mu_: RequestRelist asked
  std::set<std::string> subscribed_;                      // mu_
  CancellationToken stop_;  // cancelled by Shutdown: ends handshakes and lists in progress
  std::thread supervisor_;
};

}  // namespace keel
