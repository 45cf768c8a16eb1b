// The ledger's tools: two demo mutations whose effects live in keel's own database, run
// exactly once per idempotency key (IDEM-1..4, IDEM-6), and a read-only lookup to
// reconcile an ambiguous outcome by key.
//   charge_account {account, cents, idempotencyKey?}     -> charge_id, balance_cents
//   reserve_inventory {sku, quantity, tenant, idempotencyKey?} -> reservation_id, remaining
//   ledger_lookup {tool, key}  -> state, result, attempts, executions, timestamps
// Every execution returns fresh ids, so two executions are never mistaken for one replay.
// `crash_at` (tests only; empty in production) names a step at which the process kills
// itself: "before_effect", "after_effect" (both inside the transaction) or
// "before_result" (after COMMIT, before the answer is written).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"

namespace keel {

std::vector<std::unique_ptr<Tool>> MakeLedgerTools(std::shared_ptr<LedgerService> ledger,
                                                   std::string crash_at = std::string());

}  // namespace keel
