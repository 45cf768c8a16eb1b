#include "server/durable/remote_write.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <spdlog/spdlog.h>

#include "ledger/fingerprint.h"
#include "server/policy/failure_classify.h"
#include "server/runtime/process_attempt.h"

namespace keel {
namespace {

constexpr size_t kStartupRowsPerTool = 1000;
// A claim whose orphaned command still runs: when to look again. The command's own time is
// unknown here; a second is short next to a write worth reconciling, long next to a lookup.
constexpr int64_t kOrphanRetryAfterMs = 1000;

Reconciled LookUp(const RemoteWriteOps& ops) {
  if (!ops.lookup) return Reconciled{};
  try {
    return ops.lookup();
  } catch (const std::exception& e) {
    spdlog::warn("lookup failed: {}", e.what());
    return Reconciled{};
  }
}

Json MarkReconciled(Json result) {
  if (!result.is_object()) result = TextResult(result.dump());
  Json& meta = result["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta["dev.keel/reconciled"] = true;
  return result;
}

void Warn(bool recorded, const RemoteWriteCall& call, const char* what) {
  if (!recorded) {
    spdlog::warn(
        "{} key '{}': could not record {} in the ledger (the claim is no longer ours "
        "or the ledger failed); it will need reconciliation",
        call.tool, call.key, what);
  }
}

// The error of an ambiguous attempt, with what the lookup found.
Json Annotated(Json result, Reconciled::Outcome found) {
  Json& error = result["structuredContent"]["error"];
  std::string note;
  if (found == Reconciled::Outcome::kDidNotHappen) {
    error["failure_class"] = "not_sent";
    error["reconciled"] = "did_not_happen";
    error["effect"] = "none";
    note =
        " A lookup by idempotency key found that it did not happen: nothing changed, and it "
        "is safe to run again.";
  } else {
    error["needs_reconciliation"] = true;
    error["effect"] = "unknown";
    note =
        " Nothing could tell whether it happened: the idempotency key stays "
        "needs_reconciliation in keel's ledger, and keel will not run it again under this "
        "key. Check the backend before deciding anything.";
  }
  Json& content = result["content"];
  if (content.is_array() && !content.empty() && content[0].value("type", "") == "text") {
    content[0]["text"] = content[0].value("text", "") + note;
  }
  return result;
}

std::string AttemptName(const LedgerAttempt& attempt) {
  return attempt.pgid > 0 ? "process group " + std::to_string(attempt.pgid)
                          : "a process whose group was never recorded";
}

// The answer to a call that met a claim whose attempt may still run: nothing ran.
Json StillRunning(const LedgerRecord& row, const std::string& tool, const std::string& key) {
  const LedgerAttempt& attempt = *row.attempt;
  spdlog::info(
      "{} key '{}': the attempt started under it ({}) may still run: the key stays "
      "claimed, nothing runs",
      tool, key, AttemptName(attempt));
  MutationLedger::Outcome outcome;
  outcome.record = row;
  if (attempt.pgid > 0) {
    outcome.status = MutationLedger::Status::kInProgress;
    outcome.retry_after_ms = kOrphanRetryAfterMs;
  } else {
    outcome.status = MutationLedger::Status::kNeedsReconciliation;
  }
  return LedgerAnswer(std::move(outcome), tool, key);
}

// The ledger on a connection borrowed for one statement: `book()->Claim(...)`.
struct Book {
  LedgerService::Lease lease;
  MutationLedger* operator->() const { return &lease.ledger(); }
};

// Whether the claimant `owner` surely runs no more (never `self`): by the registry of
// instances when the database spans machines, by its pid otherwise.
bool ClaimantGone(LedgerService& ledger, const std::string& owner, const std::string& self) {
  if (owner == self) return false;
  return ledger.spans_machines() ? ledger.OwnerGone(owner) : LedgerOwnerGone(owner, self);
}

// The rule for "is this recorded attempt over": the caller's, else AttemptGone, or
// AttemptGoneHere when the attempt may have been started on another machine.
AttemptGoneFn AttemptRule(const LedgerService& ledger, const AttemptGoneFn& given) {
  if (given) return given;
  if (ledger.spans_machines()) return AttemptGoneHere;
  return nullptr;
}

}  // namespace

bool AttemptOver(const LedgerRecord& row, const AttemptGoneFn& attempt_gone) {
  if (!row.attempt) return true;
  return attempt_gone ? attempt_gone(*row.attempt) : AttemptGone(*row.attempt);
}

Json RunRemoteWrite(LedgerService& ledger, const RemoteWriteCall& call, const RemoteWriteOps& ops) {
  // A connection borrowed for each use, not held across ops.run() and the lookups: a forwarded
  // call waits on its upstream there, and would keep a connection from every other call.
  const auto book = [&ledger]() { return Book{ledger.Borrow()}; };
  const std::string fingerprint = Fingerprint(call.tool, call.intent_arguments);
  MutationLedger::Outcome claim = book()->Claim(call.tool, call.key, fingerprint, call.claim_wait,
                                                call.lease_ms, call.starting_attempt);
  const std::string& self = ledger.options().owner;
  // A live-looking claim whose process is dead (keel was killed and restarted at once) is as
  // abandoned as an expired one.
  const bool dead_claimant = claim.status == MutationLedger::Status::kInProgress &&
                             claim.record.owner != self &&
                             ClaimantGone(ledger, claim.record.owner, self);
  if (claim.status == MutationLedger::Status::kNeedsReconciliation || dead_claimant) {
    const bool adopted =
        book()->Adopt(call.tool, call.key, claim.record.owner,
                      dead_claimant || ClaimantGone(ledger, claim.record.owner, self));
    if (!adopted) return LedgerAnswer(std::move(claim), call.tool, call.key);
    claim.status = MutationLedger::Status::kNeedsReconciliation;
    const Reconciled found = LookUp(ops);
    if (found.outcome == Reconciled::Outcome::kHappened) {
      Warn(book()->Complete(call.tool, call.key, found.result, found.result.value("isError", false),
                            ""),
           call, "the looked-up outcome");
      return MarkReconciled(found.result);
    }
    // "Did not happen" means nothing while the write may still be on its way.
    if (!AttemptOver(claim.record, AttemptRule(ledger, ops.attempt_gone))) {
      return StillRunning(claim.record, call.tool, call.key);
    }
    if (found.outcome == Reconciled::Outcome::kUnknown &&
        call.effect != EffectClass::kIdempotentWrite) {
      return LedgerAnswer(std::move(claim), call.tool, call.key);
    }
    // Surely not done, or harmless to repeat: take the key anew and run.
    book()->Release(call.tool, call.key);
    claim = book()->Claim(call.tool, call.key, fingerprint, call.claim_wait, call.lease_ms,
                          call.starting_attempt);
  }
  if (claim.status != MutationLedger::Status::kExecuted) {
    return LedgerAnswer(std::move(claim), call.tool, call.key);
  }

  Json result = ops.run();
  const std::optional<AttemptFailure> failure = ClassifyResult(result);
  if (!failure) {
    Warn(book()->Complete(call.tool, call.key, result, false, ""), call, "the result");
    return result;
  }
  const Json* error = StructuredErrorOf(result);
  // The error may be a command's own, as printed: "effect" need not be a string (comparing,
  // unlike value(), does not throw).
  const bool surely_none =
      error != nullptr && error->contains("effect") && error->at("effect") == "none";
  if (surely_none || failure->failure == FailureClass::kNotSent ||
      failure->failure == FailureClass::kRejectedTransient) {
    Warn(book()->Release(call.tool, call.key), call, "that nothing happened");
    return result;
  }
  if (failure->failure == FailureClass::kRejectedPermanent) {
    Warn(book()->Complete(call.tool, call.key, result, true, ""), call, "the failure");
    return result;
  }
  const Reconciled found = LookUp(ops);
  switch (found.outcome) {
    case Reconciled::Outcome::kHappened:
      Warn(book()->Complete(call.tool, call.key, found.result, found.result.value("isError", false),
                            ""),
           call, "the looked-up outcome");
      return MarkReconciled(found.result);
    case Reconciled::Outcome::kDidNotHappen:
      Warn(book()->Release(call.tool, call.key), call, "that nothing happened");
      return Annotated(std::move(result), found.outcome);
    case Reconciled::Outcome::kUnknown:
      break;
  }
  Warn(book()->MarkNeedsReconciliation(call.tool, call.key), call, "the unknown outcome");
  return Annotated(std::move(result), found.outcome);
}

size_t ReconcileUnsettled(LedgerService& ledger, const std::string& tool, const std::string& self,
                          const std::function<Reconciled(const std::string& key)>& lookup,
                          const AttemptGoneFn& attempt_gone) {
  // A connection borrowed for each use: the lookups may wait on an upstream or a command.
  const auto book = [&ledger]() { return Book{ledger.Borrow()}; };
  size_t settled = 0;
  for (const LedgerRecord& row : book()->Unsettled(tool, kStartupRowsPerTool)) {
    if (row.owner == self) continue;  // a call of ours is running it
    const bool gone = ClaimantGone(ledger, row.owner, self);
    if (!book()->Adopt(tool, row.key, row.owner, gone)) continue;  // live elsewhere, or raced
    Reconciled found;
    try {
      found = lookup(row.key);
    } catch (const std::exception& e) {
      spdlog::warn("{} key '{}': lookup failed: {}", tool, row.key, e.what());
    }
    switch (found.outcome) {
      case Reconciled::Outcome::kHappened:
        if (book()->Complete(tool, row.key, found.result, found.result.value("isError", false),
                             "")) {
          ++settled;
          spdlog::info("{} key '{}': reconciled at start-up: it happened", tool, row.key);
        }
        break;
      case Reconciled::Outcome::kDidNotHappen:
        if (!AttemptOver(row, AttemptRule(ledger, attempt_gone))) {
          spdlog::warn(
              "{} key '{}': left by {} while {} may still run it: the lookup's \"did "
              "not happen\" cannot be trusted yet; it stays needs_reconciliation",
              tool, row.key, row.owner, AttemptName(*row.attempt));
          break;
        }
        if (book()->Release(tool, row.key)) {
          ++settled;
          spdlog::info("{} key '{}': reconciled at start-up: it did not happen", tool, row.key);
        }
        break;
      case Reconciled::Outcome::kUnknown:
        spdlog::warn(
            "{} key '{}': left by {} without an outcome, and the lookup cannot tell: "
            "it stays needs_reconciliation",
            tool, row.key, row.owner);
        break;
    }
  }
  return settled;
}

std::optional<Reconciled> StoredOutcome(const std::optional<LedgerRecord>& row) {
  if (!row || (row->state != LedgerState::kCommitted && row->state != LedgerState::kFailed)) {
    return std::nullopt;
  }
  Reconciled found;
  found.outcome = Reconciled::Outcome::kHappened;
  found.result = row->result;
  return found;
}

}  // namespace keel
