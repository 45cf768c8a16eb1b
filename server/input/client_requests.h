// ClientRequests: the requests keel sends to a legacy (2025-11-25 / 2025-06-18) client, so
// that a tool's questions (server/input/input_round.h) reach a client that speaks no multi
// round-trip requests: elicitation/create, sampling/createMessage and roots/list become
// server-to-client JSON-RPC requests, and their responses the tool's answers (MRTR-1: "legacy
// clients get server-to-client requests instead").
//
// A call's worker asks for one round at a time (CallInbox::Port::AskClient) and waits on a
// ClientAnswers box; the loop sends the round's requests, one per question, with ids keel
// owns ("keel-<n>", strings: never mistaken for the client's own ids, which keel never reuses
// anyway), to the exchange of the call that asks (through the OutputRouter), and fills the
// box when every question has its response from the peer that call came from.
//
// Threads: ClientRequests is the loop's. ClientAnswers may be used from any thread.
// Invariants:
//  1. A round ends exactly once: all answered (the responses' results, by question key), or
//     one answered with a JSON-RPC error (that error, with the question's key and method),
//     or abandoned (its call settled: the worker is told, late responses are dropped).
//  2. A response with an id keel did not send, or sent for an abandoned round, or sent to
//     another peer than the one it comes from, is not ours (OnResponse returns false); the
//     caller logs and drops it.
//  4. A question keel stops waiting for (its round abandoned, or ended by another question's
//     error) is cancelled at the client with notifications/cancelled for its id, so the
//     client can close its dialog (on the exchange the question went to). These are keel's
//     own requests: CAN-4 (never for a client's request) is untouched.
//  3. At most kMaxPending questions wait at once; a round that would exceed it fails at once
//     ("too many questions waiting") without sending anything.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "server/runtime/cancellation.h"
#include "server/runtime/clock.h"
#include "server/transport/exchange.h"
#include "server/transport/output_router.h"
#include "server/transport/output_sink.h"

namespace keel {

using Json = nlohmann::json;

// The outcome of one round, for the worker that waits on it.
class ClientAnswers {
 public:
  enum class End { kAnswered, kError, kAbandoned, kCancelled, kTimedOut };
  struct Outcome {
    End end = End::kAbandoned;
    Json answers;  // kAnswered: key -> the response's result
    Json error;    // kError: {key, method, error: the client's JSON-RPC error}; else why
  };

  // Invariant 1: the first call wins; later ones are ignored.
  void Finish(End end, Json answers, Json error);
  // Blocks until the round ends, `token` is cancelled or `deadline` passes.
  Outcome Wait(const CancellationToken& token, TimePoint deadline);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Outcome outcome_;
};

class ClientRequests {
 public:
  static constexpr size_t kMaxPending = 256;

  // Questions go to `sink` until set_router.
  explicit ClientRequests(OutputSink& sink) : own_router_(sink) {}

  // Where questions go from now on; must outlive this. Null: back to the constructor's sink.
  void set_router(OutputRouter* router) { router_ = router != nullptr ? router : &own_router_; }

  // Sends one request per question of `input_requests` (an object key -> {method, params})
  // to `exchange`, for `peer`, and ends `answers` when `peer` has answered them.
  // `generation` names the asking call in the coordinator (AbandonCall); 0: none.
  void Ask(const Json& input_requests, std::shared_ptr<ClientAnswers> answers,
           ExchangeId exchange = kNoExchange, PeerId peer = kNoPeer, uint64_t generation = 0);
  // The worker stopped waiting on `answers` (its call was cancelled or timed out): its
  // questions are forgotten (invariant 1).
  void Abandon(const ClientAnswers* answers);
  // Call `generation` settled: its rounds are abandoned as by Abandon, at once (the worker
  // learns it from the box), so the cancels reach the client before the call's exchange ends.
  void AbandonCall(uint64_t generation);
  // A response from `peer`: true when it answered one of our questions to it (invariant 2).
  bool OnResponse(const Json& id, const Json& result, const Json& error, PeerId peer = kNoPeer);

  size_t pending() const { return questions_.size(); }
  // Lines for an exchange that was gone when they were sent.
  uint64_t unroutable() const { return dropped_.lines(); }

 private:
  struct Round {
    std::shared_ptr<ClientAnswers> answers;
    Json collected = Json::object();
    size_t outstanding = 0;
    uint64_t generation = 0;  // the asking call; 0: unknown
  };
  struct Question {
    const ClientAnswers* round = nullptr;
    std::string key;
    std::string method;
    ExchangeId exchange = kNoExchange;  // where it was sent
    PeerId peer = kNoPeer;              // who may answer it
  };

  // Drops `round`; its questions still open are cancelled at the client (invariant 4).
  void Forget(const ClientAnswers* round, const char* why);

  OutputSink& Out(ExchangeId exchange) { return SinkOf(*router_, exchange, dropped_); }

  SingleSinkRouter own_router_;
  OutputRouter* router_ = &own_router_;
  DroppingSink dropped_;
  uint64_t next_id_ = 1;
  std::unordered_map<const ClientAnswers*, Round> rounds_;
  std::unordered_map<std::string, Question> questions_;  // our request id -> its question
};

}  // namespace keel
