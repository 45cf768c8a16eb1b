// ListChangedHook: how a tool that changes what keel lists (the conformance fixture
// test_trigger_tool_change) tells the Session, which then sends
// notifications/tools/list_changed on every subscriptions/listen stream that asked for it.
// The tools are built before the server that serves them exists, so the hook starts
// unconnected; the server connects it before serving (and disconnects it before it goes away)
// to a function that posts to its loop.
//
// Thread-safety: Connect and Fire may be called from any thread (tools fire from workers);
// the connected function runs on the thread that fires, so it must only post.
#pragma once

#include <functional>
#include <mutex>

namespace keel {

class ListChangedHook {
 public:
  // `fn` runs on every Fire from now on; null disconnects.
  void Connect(std::function<void()> fn);
  // Runs the connected function; false when none is connected (nobody is told).
  bool Fire() const;

 private:
  mutable std::mutex mu_;
  std::function<void()> fn_;  // guarded by mu_
};

}  // namespace keel
