// TransferPool: the UpstreamTransfers an HttpUpstream has in flight, in one libcurl multi
// handle (http_upstream.h): added, stopped, run and finished. Owned by HttpUpstream and used
// on its thread only, except Wake (any thread).
//
//  1. A transfer that is stopped (StopRequest, StopLingering, StopAll, the destructor) is
//     taken out of the multi handle, which closes its connection or stream, and freed; it is
//     never finished: nothing more of it is read or handed out.
//  2. Run() lets libcurl send and read what is ready (the transfers' callbacks, which hand
//     out messages, run inside it), then gives each finished transfer, out of the pool, with
//     its Outcome (UpstreamTransfer::Finish) to `done`.
//  3. A transfer whose answer came but whose stream the upstream keeps open is stopped
//     kAnswerLinger after the answer: it holds a connection and a slot for nothing.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "server/runtime/clock.h"
#include "server/upstream/http_upstream_transfer.h"

namespace keel {

inline constexpr Duration kAnswerLinger = Millis(1000);

class TransferPool {
 public:
  using DoneFn = std::function<void(std::unique_ptr<UpstreamTransfer> transfer,
                                    const UpstreamTransfer::Outcome& outcome)>;

  TransferPool();
  ~TransferPool();
  TransferPool(const TransferPool&) = delete;
  TransferPool& operator=(const TransferPool&) = delete;

  bool ok() const { return multi_ != nullptr; }
  // False (the transfer freed) when libcurl refuses it.
  bool Add(std::unique_ptr<UpstreamTransfer> transfer);
  size_t size() const { return active_.size(); }

  void StopRequest(const Json& id);   // rule 1: the POST of request `id`, if in flight
  void StopLingering(TimePoint now);  // rule 3
  void StopAll();

  void Run(const DoneFn& done);  // rule 2
  // Blocks until a transfer can go on, Wake, or `until` (no later than a lingering
  // transfer's end).
  void Wait(TimePoint now, TimePoint until);
  void Wake();
  // The multi handle, for UpstreamTransfer::RunAlone once the pool is empty.
  CURLM* multi() const { return multi_; }

 private:
  using Active = std::map<CURL*, std::unique_ptr<UpstreamTransfer>>;
  void Stop(Active::iterator it);

  CURLM* multi_ = nullptr;
  Active active_;
};

}  // namespace keel
