// RemoteWrite: one attempt of a keyed write whose effect happens outside keel's database (a
// command, a remote API), at most once per (tool, idempotency key) across attempts, calls,
// connections and restarts (IDEM-5), with reconciliation by key (IDEM-5).
//
// The protocol, on the mutation ledger (ledger/mutation_ledger.h):
//  1. Claim the key (an in_progress row leased for `lease_ms`). A finished key replays its
//     stored result; a mismatch, a live claim elsewhere, a busy or failing ledger answer at
//     once (LedgerAnswer) and nothing runs.
//  2. A claim left without an outcome (needs_reconciliation: the claimant died, or an earlier
//     attempt was ambiguous) is adopted and looked up: happened -> its result is stored and
//     returned (marked reconciled); otherwise, while the attempt recorded with the claim may
//     still run (a command orphaned by a keel that was killed: process_attempt.h), nothing is
//     released and nothing runs — the answer is idempotency_in_progress (retry_after_ms), or
//     needs_reconciliation when the attempt's process group was never recorded, and the row
//     stays needs_reconciliation for the next call or start-up to look up again (IDEM-5:
//     a lookup that says "did not happen" while the write is still on its way means
//     nothing). Once the attempt is known to be over (or none was recorded): did not happen ->
//     the claim is dropped and taken anew, so the effect runs; unknown -> an idempotent_write
//     runs again (a repeat with the same key is declared harmless), any other write answers
//     needs_reconciliation and runs nothing.
//  3. Run the effect once, then record what its result says (failure_classify.h):
//       success                                     -> committed (replayed from now on)
//       error.effect "none", not_sent, transient    -> claim dropped (a retry may run it)
//       rejected_permanent                          -> failed (replayed from now on)
//       ambiguous                                   -> look it up, as in 2: happened ->
//          committed with the lookup's result, which is returned; did not happen -> claim
//          dropped and the error's failure_class becomes not_sent (reconciled:
//          "did_not_happen"), so the retry executor may run it again even for an unsafe
//          write; unknown -> the row stays needs_reconciliation and the error says
//          needs_reconciliation: true.
// A lookup runs even when the call was cancelled or timed out: the ledger must learn the
// outcome whether or not anyone still waits for it.
//
// Thread-safety: runs on a worker, with that thread's ledger (LedgerService::Ledger()).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"
#include "server/policy/policy_types.h"

namespace keel {

struct RemoteWriteCall {
  std::string tool;
  std::string key;        // non-empty: the call's (approval-scoped) idempotency key
  Json intent_arguments;  // what the key binds (fingerprinted)
  EffectClass effect = EffectClass::kUnsafeWrite;
  int64_t lease_ms = 60000;  // how long the claim may stay in_progress before others adopt it
  std::chrono::milliseconds claim_wait{5000};  // bounded wait for the ledger's write lock
  // An effect that is a local process: stored with the claim (StartingAttempt()); `run`
  // names the process group once it is spawned (MutationLedger::RecordAttempt).
  std::optional<LedgerAttempt> starting_attempt;
};

// Whether a recorded attempt surely runs no more; AttemptGone (process_attempt.h) by default.
using AttemptGoneFn = std::function<bool(const LedgerAttempt&)>;

// Whether a lookup's "did not happen" (or an unknown outcome) may act on `row`: the attempt
// recorded with it is known to be over (`attempt_gone`, AttemptGone when null), or none was
// recorded. The one rule for every place that settles a claim by lookup.
bool AttemptOver(const LedgerRecord& row, const AttemptGoneFn& attempt_gone = nullptr);

// What a finished row (committed or failed) says of its call, for Tool::Reconcile after a
// restart: it happened, with the stored result. nullopt for no row or an unsettled one.
std::optional<Reconciled> StoredOutcome(const std::optional<LedgerRecord>& row);

struct RemoteWriteOps {
  std::function<Json()> run;  // one execution of the effect: a CallToolResult
  // What the backend says about the key; null: nothing can tell (always kUnknown).
  std::function<Reconciled()> lookup;
  AttemptGoneFn attempt_gone;  // null: AttemptGone
};

Json RunRemoteWrite(LedgerService& ledger, const RemoteWriteCall& call, const RemoteWriteOps& ops);

// At start-up (IDEM-5): every in_progress row of `tool` whose claimant is gone (its
// lease expired, or its process no longer runs) and every needs_reconciliation row is
// adopted and looked up; happened -> committed with the lookup's result, did not happen ->
// dropped once its recorded attempt is known to be over (else left needs_reconciliation, as
// in step 2), unknown -> left needs_reconciliation. Rows of the owner `self` are skipped.
// Returns how many rows were settled.
size_t ReconcileUnsettled(LedgerService& ledger, const std::string& tool, const std::string& self,
                          const std::function<Reconciled(const std::string& key)>& lookup,
                          const AttemptGoneFn& attempt_gone = nullptr);

}  // namespace keel
