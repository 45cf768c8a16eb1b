#include "server/durable/instance_heartbeat.h"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "server/runtime/process_attempt.h"

namespace keel {
namespace {

// Prune once in this many beats (about every ten minutes).
constexpr int kPruneEveryBeats = 300;

}  // namespace

InstanceInfo ThisInstance(const std::string& owner) {
  InstanceInfo info;
  info.owner = owner;
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) info.host = host;
  info.pid = getpid();
  info.boot_id = BootId();
  return info;
}

std::unique_ptr<InstanceHeartbeat> InstanceHeartbeat::Start(const std::string& spec,
                                                            InstanceInfo self, std::string* error) {
  std::unique_ptr<Database> db = Database::Open(spec, error);
  if (!db) return nullptr;
  try {
    InstanceRegistry(*db).Register(self);
  } catch (const std::exception& e) {
    *error = std::string("cannot register this keel in keel_instances: ") + e.what();
    return nullptr;
  }
  return std::unique_ptr<InstanceHeartbeat>(new InstanceHeartbeat(std::move(db), std::move(self)));
}

InstanceHeartbeat::InstanceHeartbeat(std::unique_ptr<Database> db, InstanceInfo self)
    : db_(std::move(db)), self_(std::move(self)) {
  thread_ = std::thread([this] { Run(); });
}

InstanceHeartbeat::~InstanceHeartbeat() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  try {
    InstanceRegistry(*db_).Deregister(self_.owner);
  } catch (const std::exception& e) {
    spdlog::warn(
        "could not remove this keel from keel_instances ({}); the others will count "
        "it gone {} s after its last heartbeat",
        e.what(), InstanceRegistry::kGoneAfterMs / 1000);
  }
}

void InstanceHeartbeat::Run() {
  bool failing = false;
  int beats = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(InstanceRegistry::kHeartbeatEveryMs),
                         [this] { return stop_; })) {
    lock.unlock();
    try {
      InstanceRegistry registry(*db_);
      registry.Heartbeat(self_);
      if (++beats % kPruneEveryBeats == 0) registry.Prune();
      if (failing) spdlog::info("keel_instances: heartbeat written again");
      failing = false;
    } catch (const std::exception& e) {
      if (!failing) {
        spdlog::warn(
            "keel_instances: heartbeat failed ({}); after {} s without one the other keels "
            "count this one gone and may adopt its unsettled claims (as needs_reconciliation)",
            e.what(), InstanceRegistry::kGoneAfterMs / 1000);
      }
      failing = true;
    }
    lock.lock();
  }
}

}  // namespace keel
