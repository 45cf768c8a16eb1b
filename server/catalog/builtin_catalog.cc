#include "server/catalog/builtin_catalog.h"

namespace keel {
namespace {

// The ledger tools' descriptions end with the same note on idempotency keys (kKeyNote in
// server/tools/ledger_tools.cc).
// A table (the catalog as JSON), long by nature: the size rules do not apply to it.
constexpr std::string_view kCatalog = R"json({
  "tools": [
    {
      "name": "echo",
      "title": "Echo",
      "description": "Returns the given text unchanged. Use it to check that keel answers.",
      "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to send back"}},
        "required": ["text"],
        "additionalProperties": false
      },
      "effect": "read",
      "backend": "keel"
    },
    {
      "name": "charge_account",
      "title": "Charge an account (demo)",
      "description": "Demo backend in keel's own database: charges `cents` to `account` (accounts open with 100000 cents) and returns a fresh charge_id and the new balance. Stores no card or payment data. With an idempotency key (the idempotencyKey argument, or _meta[\"dev.keel/idempotency-key\"]) it runs exactly once per key: a retry with the same key and arguments returns the first result (marked _meta[\"dev.keel/replayed\"]), other arguments under that key are refused and nothing runs. Without a key every call runs again, so an agent that retries should always send one.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "account": {"type": "string", "minLength": 1, "maxLength": 64},
          "cents": {"type": "integer", "minimum": 1, "maximum": 100000000},
          "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": 255}
        },
        "required": ["account", "cents"],
        "additionalProperties": false
      },
      "effect": "unsafe_write",
      "backend": "payments",
      "idempotency": {"keyComponents": ["account", "cents"]},
      "taskSupport": "optional"
    },
    {
      "name": "reserve_inventory",
      "title": "Reserve inventory (demo)",
      "description": "Demo backend in keel's own database: reserves `quantity` units of `sku` for `tenant` (each tenant's sku opens with 100 in stock) and returns a fresh reservation_id and the remaining stock. The key binds sku, quantity, tenant and the operation. With an idempotency key (the idempotencyKey argument, or _meta[\"dev.keel/idempotency-key\"]) it runs exactly once per key: a retry with the same key and arguments returns the first result (marked _meta[\"dev.keel/replayed\"]), other arguments under that key are refused and nothing runs. Without a key every call runs again, so an agent that retries should always send one.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "sku": {"type": "string", "minLength": 1, "maxLength": 64},
          "quantity": {"type": "integer", "minimum": 1, "maximum": 1000000},
          "tenant": {"type": "string", "minLength": 1, "maxLength": 64},
          "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": 255}
        },
        "required": ["sku", "quantity", "tenant"],
        "additionalProperties": false
      },
      "effect": "unsafe_write",
      "backend": "inventory",
      "taskSupport": "optional"
    },
    {
      "name": "ledger_lookup",
      "title": "Look up an idempotency key",
      "description": "Read-only: what keel's ledger knows about a mutation under an idempotency key — its state (in_progress, committed, failed, needs_reconciliation), the stored result, how often the key was presented (attempts) and how often the effect ran (executions), and when. Use it to resolve an ambiguous outcome (a lost response, a timeout) before deciding whether to retry.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "tool": {"type": "string", "minLength": 1, "maxLength": 64},
          "key": {"type": "string", "minLength": 1, "maxLength": 255}
        },
        "required": ["tool", "key"],
        "additionalProperties": false
      },
      "effect": "read",
      "backend": "ledger"
    },
    {"name": "get_deployment_job", "title": "Get a deployment job (simulated backend)", "description": "Read-only: the current state of a deployment job (running or restarting), its environment, version, restart count and last restart operation, from the simulated deployment API. Jobs: web-api, worker (production), billing-sync (staging).", "inputSchema": {"type": "object", "properties": {"job_id": {"type": "string", "minLength": 1, "maxLength": 64}}, "required": ["job_id"], "additionalProperties": false}, "effect": "read", "backend": "deployment-api", "timeouts": {"idleMs": 10000, "maxMs": 10000, "attemptMs": 7000}, "retry": {"maxAttempts": 3, "baseMs": 250, "capMs": 1500, "minUsefulAttemptMs": 3500}},
    {"name": "restart_deployment_job", "title": "Restart a deployment job (simulated backend, needs approval)", "description": "Restarts a deployment job. Needs an approval_id. The backend creates one restart operation per idempotency key, made of intent_id, job_id, environment and approval_id: the same request again returns the same operation_id. After an ambiguous failure keel does not retry: look the key up with lookup_deployment_operation before deciding anything.", "inputSchema": {"type": "object", "properties": {"job_id": {"type": "string", "minLength": 1, "maxLength": 64}, "environment": {"type": "string", "enum": ["production", "staging"]}, "intent_id": {"type": "string", "minLength": 1, "maxLength": 128}}, "required": ["job_id", "environment", "intent_id"], "additionalProperties": false}, "effect": "unsafe_write", "backend": "deployment-api", "timeouts": {"idleMs": 10000, "maxMs": 10000, "attemptMs": 7000}, "retry": {"maxAttempts": 3, "baseMs": 250, "capMs": 1500, "minUsefulAttemptMs": 3500}, "idempotency": {"keyComponents": ["intent_id", "job_id", "environment"]}, "approval": "required"},
    {"name": "lookup_deployment_operation", "title": "Look up a deployment operation by idempotency key (simulated backend)", "description": "Read-only: the operation the deployment API created under an idempotency key, if any. Use it after an ambiguous restart (a lost response, a timeout) to learn whether the restart happened.", "inputSchema": {"type": "object", "properties": {"idempotency_key": {"type": "string", "minLength": 1, "maxLength": 512}}, "required": ["idempotency_key"], "additionalProperties": false}, "effect": "read", "backend": "deployment-api"}
  ]
}
)json";

}  // namespace

std::string_view BuiltinCatalogJson() { return kCatalog; }

}  // namespace keel
