#include "server/tools/ledger_tools.h"

#include <signal.h>

#include <chrono>
#include <optional>
#include <random>

#include <spdlog/spdlog.h>

#include "ledger/fingerprint.h"
#include "protocol/iso_time.h"
#include "server/call/idempotency_key.h"
#include "server/call/kill_switch_answer.h"
#include "server/runtime/clock.h"

namespace keel {
namespace {

constexpr int64_t kOpeningBalanceCents = 100000;
constexpr int64_t kOpeningStock = 100;
constexpr std::chrono::milliseconds kMaxLockWait{30000};

// A fresh id per execution ("ch_019ae3c2a5b4f1e2d3c4b5a697"), so two executions never look
// like one replay: the wall-clock milliseconds (11 hex digits), then 64 random bits. Time
// first, so ids written together sit together in their table's index: a transaction of
// many charges dirties one index page, not one per charge (fewer WAL pages per commit).
std::string FreshId(const char* prefix) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  char text[48];
  std::snprintf(text, sizeof(text), "%s_%011llx%016llx", prefix,
                static_cast<unsigned long long>(WallClockMs()) & 0xfffffffffffULL,
                static_cast<unsigned long long>(random()));
  return text;
}

// A terminal refusal of a demo effect (nothing changed): stored as failed and replayed so.
EffectOutcome Refused(const std::string& text, const Json& error) {
  EffectOutcome refused;
  refused.failed = true;
  refused.result = ErrorResult(text, error);
  return refused;
}

// A tool whose effect lives in keel's own database, run exactly once per idempotency key.
class MutationTool : public Tool {
 public:
  // What every in-database mutation shares: it may run as a task, and without a key a
  // repeat runs its effect again (unsafe_write, so the kill switch stops it).
  MutationTool(std::shared_ptr<LedgerService> ledger, std::string crash_at)
      : ledger_(std::move(ledger)), crash_at_(std::move(crash_at)) {
    spec_.task_support = TaskSupport::kOptional;
    spec_.effect = EffectClass::kUnsafeWrite;
    spec_.kill_switch_in_transaction = true;  // the ledger reads it in the effect's transaction
    spec_.annotations = Json{{"readOnlyHint", false},
                             {"destructiveHint", false},
                             {"idempotentHint", false},
                             {"openWorldHint", false}};
  }
  const ToolSpec& spec() const override { return spec_; }

  Json Call(ToolContext& ctx) override {
    const std::string& problem = ctx.identity().key_problem;
    if (!problem.empty()) {
      return ErrorResult("Invalid arguments for tool '" + spec_.name + "': " + problem,
                         Json{{"type", "invalid_arguments"}, {"message", problem}});
    }
    const std::string& key = ctx.identity().idempotency_key;
    auto effect = [&](Database& db) {
      CrashIfAt("before_effect");
      EffectOutcome outcome = Effect(db, ctx.arguments(), key);
      CrashIfAt("after_effect");
      return outcome;
    };
    // A task's deadline can be hours away; a writer waits for the lock 30 s at most.
    const auto wait = std::min<std::chrono::milliseconds>(ctx.remaining(), kMaxLockWait);
    ctx.checkpoint();  // cancelled before the effect: it never runs
    // The answer names the tool as the client was shown it: a catalog may declare this
    // write under another write class (CatalogTool's spec, the registry's tool).
    const Tool* shown = ctx.identity().tool;
    auto blocked = [this, shown](const KillSwitchState& state) {
      return KillSwitchAnswer(shown != nullptr ? shown->spec() : spec_, state);
    };
    Json result = key.empty() ? ledger_->RunUnkeyed(effect, blocked)
                              : ledger_->RunKeyed(spec_.name, key, ctx.intent_arguments(), wait,
                                                  effect, blocked);
    CrashIfAt("before_result");
    return result;
  }

  // The effect commits with its ledger row (IDEM-3): under a key, the row tells whether
  // it happened; no row means it did not. `arguments` are the intent arguments (the
  // catalog's wrapper projects them as Call's fingerprint did).
  Reconciled Reconcile(const Json& arguments, const Json& meta) override {
    const auto [key, problem] = CallKeyOf(meta, arguments);
    if (key.empty() || !problem.empty()) return Reconciled{};
    std::optional<LedgerRecord> row;
    try {
      row = ledger_->Borrow().ledger().Lookup(spec_.name, key);
    } catch (const SqliteError& e) {
      // An unreadable ledger cannot tell: never "did not happen", which would let it run again.
      spdlog::warn("{} key '{}': the ledger could not be read: {}", spec_.name, key, e.what());
      return Reconciled{};
    }
    if (!row) return Reconciled{Reconciled::Outcome::kDidNotHappen, Json()};
    if (row->fingerprint != Fingerprint(spec_.name, arguments)) return Reconciled{};
    if (row->state == LedgerState::kCommitted || row->state == LedgerState::kFailed) {
      return Reconciled{Reconciled::Outcome::kHappened, row->result};
    }
    return Reconciled{};
  }

 protected:
  virtual EffectOutcome Effect(Database& db, const Json& args, const std::string& key) = 0;
  ToolSpec spec_;

 private:
  // Test-only (--test-tools with KEEL_TEST_CRASH_AT): dies like a killed process at one
  // step between the claim and the answer, so tests can show no effect runs twice.
  void CrashIfAt(const char* step) const {
    if (crash_at_ != step) return;
    spdlog::warn("KEEL_TEST_CRASH_AT={}: killing keel now", step);
    spdlog::default_logger()->flush();
    raise(SIGKILL);
  }

  std::shared_ptr<LedgerService> ledger_;
  std::string crash_at_;
};

constexpr const char* kKeyNote =
    " With an idempotency key (the idempotencyKey argument, or "
    "_meta[\"dev.keel/idempotency-key\"]) it runs exactly once per key: a retry with the same "
    "key and arguments returns the first result (marked _meta[\"dev.keel/replayed\"]), other "
    "arguments under that key are refused and nothing runs. Without a key every call runs "
    "again, so an agent that retries should always send one.";

class ChargeAccount final : public MutationTool {
 public:
  explicit ChargeAccount(std::shared_ptr<LedgerService> ledger, std::string crash_at)
      : MutationTool(std::move(ledger), std::move(crash_at)) {
    spec_.name = "charge_account";
    spec_.title = "Charge an account (demo)";
    spec_.description =
        std::string(
            "Demo backend in keel's own database: charges `cents` to `account` "
            "(accounts open with 100000 cents) and returns a fresh charge_id and the "
            "new balance. Stores no card or payment data.") +
        kKeyNote;
    spec_.input_schema = Json::parse(R"({"type":"object","properties":{
        "account":{"type":"string","minLength":1,"maxLength":64},
        "cents":{"type":"integer","minimum":1,"maximum":100000000},
        "idempotencyKey":{"type":"string","minLength":1,"maxLength":255}},
      "required":["account","cents"],"additionalProperties":false})");
  }

 protected:
  EffectOutcome Effect(Database& db, const Json& args, const std::string& key) override {
    const std::string account = args.at("account").get<std::string>();
    const int64_t cents = args.at("cents").get<int64_t>();
    // The common case in one statement: an open account with the funds. Otherwise it is
    // opened if new, and its balance read to charge or refuse.
    std::optional<int64_t> balance_after;
    {
      Statement charge = db.Prepare(
          "UPDATE accounts SET balance_cents = balance_cents - ?2 "
          "WHERE account = ?1 AND balance_cents >= ?2 RETURNING balance_cents");
      charge.Bind(1, account).Bind(2, cents);
      if (charge.Step()) balance_after = charge.Int64(0);
    }
    if (!balance_after) {
      db.Prepare(
            "INSERT INTO accounts(account, balance_cents) VALUES(?1, ?2) ON CONFLICT DO NOTHING")
          .Bind(1, account)
          .Bind(2, kOpeningBalanceCents)
          .Run();
      int64_t balance = 0;
      {
        Statement read = db.Prepare("SELECT balance_cents FROM accounts WHERE account = ?1");
        read.Bind(1, account);
        read.Step();
        balance = read.Int64(0);
      }
      if (balance < cents) {
        return Refused("Insufficient funds: " + account + " has " + std::to_string(balance) +
                           " cents, the charge was " + std::to_string(cents) +
                           "; nothing was charged.",
                       Json{{"type", "insufficient_funds"}, {"balance_cents", balance}});
      }
      db.Prepare("UPDATE accounts SET balance_cents = balance_cents - ?2 WHERE account = ?1")
          .Bind(1, account)
          .Bind(2, cents)
          .Run();
      balance_after = balance - cents;
    }
    const std::string charge_id = FreshId("ch");
    const int64_t now = WallClockMs();
    Statement insert = db.Prepare(
        "INSERT INTO charges(charge_id, account, cents, idempotency_key, created_ms) "
        "VALUES(?1, ?2, ?3, ?4, ?5)");
    insert.Bind(1, charge_id).Bind(2, account).Bind(3, cents).Bind(5, now);
    if (key.empty())
      insert.BindNull(4);
    else
      insert.Bind(4, key);
    insert.Run();
    EffectOutcome done;
    done.operation_id = charge_id;
    done.result =
        StructuredResult("Charged " + std::to_string(cents) + " cents to " + account + " (charge " +
                             charge_id + "); balance " + std::to_string(*balance_after) + " cents.",
                         Json{{"charge_id", charge_id},
                              {"account", account},
                              {"cents", cents},
                              {"balance_cents", *balance_after},
                              {"executed_at", IsoTime(now)}});
    return done;
  }
};

class ReserveInventory final : public MutationTool {
 public:
  explicit ReserveInventory(std::shared_ptr<LedgerService> ledger, std::string crash_at)
      : MutationTool(std::move(ledger), std::move(crash_at)) {
    spec_.name = "reserve_inventory";
    spec_.title = "Reserve inventory (demo)";
    spec_.description =
        std::string(
            "Demo backend in keel's own database: reserves `quantity` units of `sku` "
            "for `tenant` (each tenant's sku opens with 100 in stock) and returns a "
            "fresh reservation_id and the remaining stock. The key binds sku, "
            "quantity, tenant and the operation.") +
        kKeyNote;
    spec_.input_schema = Json::parse(R"({"type":"object","properties":{
        "sku":{"type":"string","minLength":1,"maxLength":64},
        "quantity":{"type":"integer","minimum":1,"maximum":1000000},
        "tenant":{"type":"string","minLength":1,"maxLength":64},
        "idempotencyKey":{"type":"string","minLength":1,"maxLength":255}},
      "required":["sku","quantity","tenant"],"additionalProperties":false})");
  }

 protected:
  EffectOutcome Effect(Database& db, const Json& args, const std::string& key) override {
    const std::string sku = args.at("sku").get<std::string>();
    const std::string tenant = args.at("tenant").get<std::string>();
    const int64_t quantity = args.at("quantity").get<int64_t>();
    db.Prepare(
          "INSERT INTO inventory(tenant, sku, stock) VALUES(?1, ?2, ?3) ON CONFLICT DO NOTHING")
        .Bind(1, tenant)
        .Bind(2, sku)
        .Bind(3, kOpeningStock)
        .Run();
    int64_t stock = 0;
    {
      Statement read = db.Prepare("SELECT stock FROM inventory WHERE tenant = ?1 AND sku = ?2");
      read.Bind(1, tenant).Bind(2, sku);
      read.Step();
      stock = read.Int64(0);
    }
    if (stock < quantity) {
      return Refused("Out of stock: " + tenant + "/" + sku + " has " + std::to_string(stock) +
                         " left, " + std::to_string(quantity) +
                         " were asked; nothing was reserved.",
                     Json{{"type", "out_of_stock"}, {"stock", stock}});
    }
    const std::string reservation_id = FreshId("rsv");
    const int64_t now = WallClockMs();
    db.Prepare("UPDATE inventory SET stock = stock - ?3 WHERE tenant = ?1 AND sku = ?2")
        .Bind(1, tenant)
        .Bind(2, sku)
        .Bind(3, quantity)
        .Run();
    Statement insert = db.Prepare(
        "INSERT INTO reservations(reservation_id, tenant, sku, quantity, idempotency_key, "
        "created_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    insert.Bind(1, reservation_id).Bind(2, tenant).Bind(3, sku).Bind(4, quantity).Bind(6, now);
    if (key.empty())
      insert.BindNull(5);
    else
      insert.Bind(5, key);
    insert.Run();
    EffectOutcome done;
    done.operation_id = reservation_id;
    done.result = StructuredResult("Reserved " + std::to_string(quantity) + " of " + sku + " for " +
                                       tenant + " (reservation " + reservation_id + "); " +
                                       std::to_string(stock - quantity) + " left.",
                                   Json{{"reservation_id", reservation_id},
                                        {"tenant", tenant},
                                        {"sku", sku},
                                        {"quantity", quantity},
                                        {"remaining", stock - quantity},
                                        {"executed_at", IsoTime(now)}});
    return done;
  }
};

class LedgerLookup final : public Tool {
 public:
  explicit LedgerLookup(std::shared_ptr<LedgerService> ledger) : ledger_(std::move(ledger)) {
    spec_.name = "ledger_lookup";
    spec_.title = "Look up an idempotency key";
    spec_.description =
        "Read-only: what keel's ledger knows about a mutation under an idempotency key — "
        "its state (in_progress, committed, failed, needs_reconciliation), the stored "
        "result, how often the key was presented (attempts) and how often the effect ran "
        "(executions), and when. Use it to resolve an ambiguous outcome (a lost response, a "
        "timeout) before deciding whether to retry.";
    spec_.input_schema = Json::parse(R"({"type":"object","properties":{
        "tool":{"type":"string","minLength":1,"maxLength":64},
        "key":{"type":"string","minLength":1,"maxLength":255}},
      "required":["tool","key"],"additionalProperties":false})");
    spec_.annotations =
        Json{{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}};
  }
  const ToolSpec& spec() const override { return spec_; }

  Json Call(ToolContext& ctx) override {
    const std::string tool = ctx.arguments().at("tool").get<std::string>();
    const std::string key = ctx.arguments().at("key").get<std::string>();
    std::optional<LedgerRecord> record;
    try {
      record = ledger_->Borrow().ledger().Lookup(tool, key);
    } catch (const SqliteError& e) {
      return ErrorResult(std::string("The ledger could not be read: ") + e.what(),
                         Json{{"type", "ledger_error"}, {"retry_after_ms", 100}});
    }
    if (!record) {
      return StructuredResult("No ledger entry for tool '" + tool + "' and key '" + key +
                                  "': no call with that key ran (or its entry expired).",
                              Json{{"found", false}, {"tool", tool}, {"key", key}});
    }
    Json structured = {{"found", true},
                       {"tool", record->tool},
                       {"key", record->key},
                       {"state", std::string(LedgerStateName(record->state))},
                       {"result", record->result},
                       {"attempts", record->attempts},
                       {"executions", record->executions},
                       {"fingerprint", record->fingerprint},
                       {"operation_id", record->operation_id},
                       {"created_at", IsoTime(record->created_ms)},
                       {"updated_at", IsoTime(record->updated_ms)}};
    if (record->expires_ms > 0) structured["expires_at"] = IsoTime(record->expires_ms);
    return StructuredResult("Key '" + key + "' for tool '" + tool + "' is " +
                                std::string(LedgerStateName(record->state)) + ": " +
                                std::to_string(record->executions) + " execution(s), " +
                                std::to_string(record->attempts) + " attempt(s).",
                            std::move(structured));
  }

 private:
  std::shared_ptr<LedgerService> ledger_;
  ToolSpec spec_;
};

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeLedgerTools(std::shared_ptr<LedgerService> ledger,
                                                   std::string crash_at) {
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(std::make_unique<ChargeAccount>(ledger, crash_at));
  tools.push_back(std::make_unique<ReserveInventory>(ledger, crash_at));
  tools.push_back(std::make_unique<LedgerLookup>(ledger));
  return tools;
}

}  // namespace keel
