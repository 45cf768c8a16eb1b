#include "server/input/client_requests.h"

#include <vector>

#include <spdlog/spdlog.h>

#include "protocol/json_rpc.h"

namespace keel {

void ClientAnswers::Finish(End end, Json answers, Json error) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    outcome_ = Outcome{end, std::move(answers), std::move(error)};
  }
  cv_.notify_all();
}

ClientAnswers::Outcome ClientAnswers::Wait(const CancellationToken& token, TimePoint deadline) {
  // A cancel wakes the wait through the same condition variable as an answer.
  const CancellationToken::Registration wake =
      token.OnCancel([this] { Finish(End::kCancelled, Json(), Json("cancelled")); });
  std::unique_lock<std::mutex> lock(mu_);
  // The deadline is on the steady clock, as every call deadline is.
  if (!cv_.wait_until(lock, deadline, [this] { return done_; })) {
    done_ = true;
    outcome_ = Outcome{End::kTimedOut, Json(), Json("the call's deadline passed")};
  }
  return outcome_;
}

void ClientRequests::Ask(const Json& input_requests, std::shared_ptr<ClientAnswers> answers,
                         ExchangeId exchange, PeerId peer, uint64_t generation) {
  if (!input_requests.is_object() || input_requests.empty() ||
      questions_.size() + input_requests.size() > kMaxPending) {
    answers->Finish(ClientAnswers::End::kError, Json(),
                    Json{{"error", {{"code", -32603}, {"message", "too many questions waiting"}}}});
    return;
  }
  const ClientAnswers* number = answers.get();
  Round& round = rounds_[number];
  round.answers = std::move(answers);
  round.outstanding = input_requests.size();
  round.generation = generation;
  for (const auto& [key, request] : input_requests.items()) {
    const std::string id = "keel-" + std::to_string(next_id_++);
    const std::string method = request.value("method", std::string());
    questions_[id] = Question{number, key, method, exchange, peer};
    Out(exchange).SendRequest(EncodeRequest(id, method, request.value("params", Json::object())));
  }
}

void ClientRequests::Forget(const ClientAnswers* round, const char* why) {
  rounds_.erase(round);
  for (auto it = questions_.begin(); it != questions_.end();) {
    if (it->second.round != round) {
      ++it;
      continue;
    }
    Out(it->second.exchange)
        .SendResponse(EncodeNotification("notifications/cancelled",
                                         Json{{"requestId", it->first}, {"reason", why}}));
    it = questions_.erase(it);
  }
}

void ClientRequests::Abandon(const ClientAnswers* round) {
  const auto it = rounds_.find(round);
  if (it == rounds_.end()) return;
  it->second.answers->Finish(ClientAnswers::End::kAbandoned, Json(), Json("the call settled"));
  Forget(round, "the tool call that asked was cancelled or timed out");
}

void ClientRequests::AbandonCall(uint64_t generation) {
  if (generation == 0 || rounds_.empty()) return;
  std::vector<const ClientAnswers*> asked;
  for (const auto& [round, state] : rounds_) {
    if (state.generation == generation) asked.push_back(round);
  }
  for (const ClientAnswers* round : asked) Abandon(round);
}

bool ClientRequests::OnResponse(const Json& id, const Json& result, const Json& error,
                                PeerId peer) {
  if (!id.is_string()) return false;
  const auto found = questions_.find(id.get<std::string>());
  if (found == questions_.end() || found->second.peer != peer) return false;
  const Question question = found->second;
  questions_.erase(found);
  Round& round = rounds_.at(question.round);
  if (!error.is_null()) {
    round.answers->Finish(
        ClientAnswers::End::kError, Json(),
        Json{{"key", question.key}, {"method", question.method}, {"error", error}});
    Forget(question.round, "another question of the same tool call failed");
    return true;
  }
  round.collected[question.key] = result;
  if (--round.outstanding == 0) {
    round.answers->Finish(ClientAnswers::End::kAnswered, std::move(round.collected), Json());
    Forget(question.round, "answered");  // nothing left open
  }
  return true;
}

}  // namespace keel
