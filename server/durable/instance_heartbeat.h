// InstanceHeartbeat: this keel in the registry of live instances of a shared PostgreSQL
// database (ledger/instance_registry.h, DIST-2). Registers at construction, renews the
// heartbeat every InstanceRegistry::kHeartbeatEveryMs on a thread and a connection of its
// own (so a busy worker pool never delays it), prunes long-dead rows now and then, and
// deregisters at destruction: a keel that exits cleanly is gone at once for the others.
//
// A heartbeat that fails (the server restarting, a lost connection) is logged once per
// outage and tried again at the next beat; the connection reopens by itself (pg_database.h).
//
// Thread-safety: construct and destroy on one thread; the beat runs on its own.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "ledger/database.h"
#include "ledger/instance_registry.h"

namespace keel {

class InstanceHeartbeat {
 public:
  // Null with *error set when the database cannot be opened or the registration fails.
  static std::unique_ptr<InstanceHeartbeat> Start(const std::string& spec, InstanceInfo self,
                                                  std::string* error);
  ~InstanceHeartbeat();
  InstanceHeartbeat(const InstanceHeartbeat&) = delete;
  InstanceHeartbeat& operator=(const InstanceHeartbeat&) = delete;

  const InstanceInfo& self() const { return self_; }

 private:
  InstanceHeartbeat(std::unique_ptr<Database> db, InstanceInfo self);
  void Run();

  std::unique_ptr<Database> db_;  // used by the beat thread only, after construction
  InstanceInfo self_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

// This machine as an instance: host name, boot id, pid, and `owner`.
InstanceInfo ThisInstance(const std::string& owner);

}  // namespace keel
