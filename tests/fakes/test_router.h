// TestRouter: an OutputRouter (server/transport/output_router.h) over sinks a test names,
// one per exchange, so a test can tell which exchange each line went to. An exchange never
// added, or closed, has no sink: its lines are dropped, as a closed HTTP exchange's are.
// Loop thread only, like every router.
#pragma once

#include <unordered_map>

#include "server/transport/output_router.h"

namespace keel {

class TestRouter final : public OutputRouter {
 public:
  void Add(ExchangeId id, OutputSink& sink) { sinks_[id] = &sink; }
  void Close(ExchangeId id) { sinks_.erase(id); }
  OutputSink* Find(ExchangeId id) override {
    const auto it = sinks_.find(id);
    return it == sinks_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<ExchangeId, OutputSink*> sinks_;
};

}  // namespace keel
