// UpstreamTool: a tool of the server keel wraps, served as one of keel's own (WRAP-1,
// WRAP-2): the call goes through keel's whole pipeline (admission, clocks, cancellation,
// retries, breaker, kill switch, approval, shadow mode, trace) and each attempt is
// forwarded (upstream_call.h).
//
//  1. The spec is the upstream's (name, title, description, schemas, annotations) with the
//     catalog overlay over it (server/catalog/catalog_overlay.h: the effect class from the
//     overlay, else from the annotations; annotations are hints, the overlay is the
//     authority). asks_for_input is set (an upstream may ask at any time).
//  2. The arguments are forwarded as the client gave them, except keel's own
//     `idempotencyKey` and `approval_id` (OPS-3, when the overlay asks for approval), each
//     removed unless the upstream's own inputSchema declares it.
//     The client's _meta is passed on without keel's key (`dev.keel/idempotency-key`),
//     progressToken and the io.modelcontextprotocol/ envelope — unless upstream_takes_key:
//     then the key is passed in _meta["dev.keel/idempotency-key"] (and as the
//     idempotencyKey argument when the schema declares it).
//  3. A write with an idempotency key runs at most once per key through keel's ledger
//     (RunRemoteWrite, remote_write.h): a finished key replays its result, a mismatch or a
//     live claim answers at once, and an ambiguous attempt (upstream_lost, a timeout, a
//     cancel) leaves the key needs_reconciliation for an unsafe write — nothing can look it
//     up, so it is never sent again under that key. An idempotent_write may run again.
//
// Thread-safety: Call() is reentrant.
#pragma once

#include <memory>

#include "server/catalog/tool.h"
#include "server/durable/ledger_service.h"
#include "server/upstream/upstream_link.h"

namespace keel {

struct UpstreamToolOptions {
  bool upstream_takes_key = false;        // the overlay's upstreamTakesKey (rule 2)
  bool upstream_has_approval_id = false;  // the upstream's own schema declares approval_id
  bool upstream_has_key = false;          // ... and idempotencyKey
  // The upstream lists it with execution.taskSupport "required": each attempt runs it as an
  // upstream task (upstream_call.h rule 9).
  bool upstream_requires_task = false;
};

class UpstreamTool final : public Tool {
 public:
  // `ledger` may be null only for reads.
  UpstreamTool(ToolSpec spec, std::shared_ptr<UpstreamLink> link,
               std::shared_ptr<LedgerService> ledger, UpstreamToolOptions options);

  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override;
  // After a restart: a keyed write's stored outcome, if the ledger has one.
  Reconciled Reconcile(const Json& arguments, const Json& meta) override;

 private:
  Json Attempt(ToolContext& ctx, const std::string& key) const;

  ToolSpec spec_;
  std::shared_ptr<UpstreamLink> link_;
  std::shared_ptr<LedgerService> ledger_;
  UpstreamToolOptions options_;
};

// The internal tool keel's resources/read, prompts/get and completion/complete of a wrapped
// server run as (surface_answer.h): arguments {method, params}; each attempt forwards that
// method (upstream_call.h rule 8). A read.
class UpstreamSurfaceTool final : public Tool {
 public:
  explicit UpstreamSurfaceTool(std::shared_ptr<UpstreamLink> link);
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override;

 private:
  ToolSpec spec_;
  std::shared_ptr<UpstreamLink> link_;
};

}  // namespace keel
