#include "server/policy/builtin_catalog.h"

namespace keel {
namespace {

// The ledger tools' descriptions end with the same note on idempotency keys (kKeyNote in
// server/tools/ledger_tools.cc).
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
    }
  ]
}
)json";

}  // namespace

std::string_view BuiltinCatalogJson() { return kCatalog; }

}  // namespace keel
