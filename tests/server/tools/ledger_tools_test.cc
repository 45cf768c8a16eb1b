// The ledger's tools over a real SQLite file: charge_account and reserve_inventory run
// exactly once per idempotency key, every time without one, and ledger_lookup reconciles
// by key. Proves IDEM-1, IDEM-2, IDEM-3 (two connections at a barrier), IDEM-4 (reopen,
// defensive copies) and the seed's practice lab for reserve_inventory (IDEM-6).
#include "server/tools/ledger_tools.h"

#include <barrier>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "fakes/damaged_pages.h"
#include "fakes/temp_ledger.h"

namespace keel::ledger_tools_test {
namespace {

class Ledger {
 public:
  Ledger() { Tools(); }

  // The file opened again (a restarted keel), with new tools on it.
  void Open() {
    tools_.clear();
    ledger_.Reopen();
    Tools();
  }

  Json Call(const std::string& name, Json args, Json meta = Json()) {
    for (auto& tool : tools_) {
      if (tool->spec().name != name) continue;
      ToolContext ctx(std::move(args), CancellationToken(), nullptr);
      ctx.set_identity(NewCallIdentity(*tool, ctx.arguments(), meta));
      ctx.set_meta(std::move(meta));
      return tool->Call(ctx);
    }
    FAIL("no tool " << name);
    return Json();
  }

  Reconciled Reconcile(const std::string& name, const Json& args) {
    for (auto& tool : tools_) {
      if (tool->spec().name == name) return tool->Reconcile(args, Json());
    }
    FAIL("no tool " << name);
    return Reconciled{};
  }

  int64_t Count(const std::string& sql) {
    const LedgerService::Lease lease = ledger_->Borrow();
    Statement s = lease.db().Prepare(sql);
    REQUIRE(s.Step());
    return s.Int64(0);
  }

  LedgerService& service() { return *ledger_; }
  std::string path() const { return ledger_.path(); }

 private:
  void Tools() {
    for (auto& tool : MakeLedgerTools(ledger_.service())) tools_.push_back(std::move(tool));
  }

  TempLedger ledger_;
  std::vector<std::unique_ptr<Tool>> tools_;
};

Json Charge(int cents, const char* key = nullptr) {
  Json args = {{"account", "acct-7"}, {"cents", cents}};
  if (key != nullptr) args["idempotencyKey"] = key;
  return args;
}

Json Reserve(int quantity, const char* key, const char* sku = "sku-1",
             const char* tenant = "tenant-a") {
  Json args = {{"sku", sku}, {"quantity", quantity}, {"tenant", tenant}};
  if (key != nullptr) args["idempotencyKey"] = key;
  return args;
}

bool Replayed(const Json& result) {
  return result.contains("_meta") && result["_meta"].value("dev.keel/replayed", false);
}

TEST_CASE(
    "without a key, a retried charge runs twice: a new JSON-RPC id is not idempotence "
    "(IDEM-1)",
    "[ledger-tools][IDEM-1]") {
  Ledger l;
  const Json first = l.Call("charge_account", Charge(1200));
  const Json second = l.Call("charge_account", Charge(1200));
  CHECK(first["structuredContent"]["charge_id"] != second["structuredContent"]["charge_id"]);
  CHECK(second["structuredContent"]["balance_cents"] == 100000 - 2400);
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 2);
}

TEST_CASE("the same key twice charges once and replays the first result, marked (IDEM-2)",
          "[ledger-tools][IDEM-2]") {
  Ledger l;
  const Json first = l.Call("charge_account", Charge(1200, "checkout-7"));
  const Json again = l.Call("charge_account", Charge(1200, "checkout-7"));
  CHECK_FALSE(Replayed(first));
  REQUIRE(Replayed(again));
  CHECK(again["_meta"].contains("dev.keel/original_time"));
  CHECK(again["structuredContent"] == first["structuredContent"]);
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 1);
  CHECK(l.Count("SELECT balance_cents FROM accounts WHERE account = 'acct-7'") == 98800);
  // The key may also travel in _meta.
  const Json via_meta =
      l.Call("charge_account", Charge(1200), {{"dev.keel/idempotency-key", "checkout-7"}});
  CHECK(Replayed(via_meta));
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 1);
}

TEST_CASE("two keys with the same arguments are two intents: two charges (IDEM-2)",
          "[ledger-tools][IDEM-2]") {
  Ledger l;
  l.Call("charge_account", Charge(500, "k1"));
  l.Call("charge_account", Charge(500, "k2"));
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 2);
}

TEST_CASE("the same key with other arguments is refused and charges nothing (IDEM-2)",
          "[ledger-tools][IDEM-2]") {
  Ledger l;
  l.Call("charge_account", Charge(1200, "checkout-7"));
  const Json refused = l.Call("charge_account", Charge(1300, "checkout-7"));
  CHECK(refused["isError"] == true);
  CHECK(refused["structuredContent"]["error"]["type"] == "idempotency_key_mismatch");
  CHECK(refused["structuredContent"]["error"]["idempotency_key"] == "checkout-7");
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 1);
  CHECK(l.Count("SELECT balance_cents FROM accounts WHERE account = 'acct-7'") == 98800);
}

TEST_CASE("a key given twice with different values is an argument error", "[ledger-tools]") {
  Ledger l;
  const Json result =
      l.Call("charge_account", Charge(10, "a"), {{"dev.keel/idempotency-key", "b"}});
  CHECK(result["structuredContent"]["error"]["type"] == "invalid_arguments");
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 0);
}

TEST_CASE(
    "two connections released at a barrier with one key: one execution, both see it "
    "(IDEM-3)",
    "[ledger-tools][IDEM-3]") {
  Ledger l;
  for (int round = 0; round < 20; ++round) {
    const std::string key = "race-" + std::to_string(round);
    std::barrier start(2);
    Json results[2];
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        results[i] = l.Call("reserve_inventory", Reserve(3, key.c_str()));
      });
    }
    for (auto& t : threads) t.join();
    CHECK(results[0]["structuredContent"]["reservation_id"] ==
          results[1]["structuredContent"]["reservation_id"]);
    CHECK(Replayed(results[0]) != Replayed(results[1]));
  }
  CHECK(l.Count("SELECT COUNT(*) FROM reservations") == 20);
  CHECK(l.Count("SELECT stock FROM inventory") == 100 - 20 * 3);
}

TEST_CASE("the practice lab: reserve_inventory under a key (IDEM-6, IDEM-4)",
          "[ledger-tools][IDEM-6][IDEM-4]") {
  Ledger l;
  // The key binds sku, quantity, tenant and the operation.
  Json first = l.Call("reserve_inventory", Reserve(5, "order-42"));
  const std::string reservation = first["structuredContent"]["reservation_id"].get<std::string>();
  CHECK(first["structuredContent"]["remaining"] == 95);

  // A retry with the same key and arguments returns the first reservation.
  const Json retry = l.Call("reserve_inventory", Reserve(5, "order-42"));
  CHECK(Replayed(retry));
  CHECK(retry["structuredContent"]["reservation_id"] == reservation);

  // A changed quantity, sku or tenant under the key fails, with no extra reservation.
  for (const Json& changed : {Reserve(6, "order-42"), Reserve(5, "order-42", "sku-2"),
                              Reserve(5, "order-42", "sku-1", "tenant-b")}) {
    const Json refused = l.Call("reserve_inventory", changed);
    CHECK(refused["structuredContent"]["error"]["type"] == "idempotency_key_mismatch");
  }
  CHECK(l.Count("SELECT COUNT(*) FROM reservations") == 1);
  CHECK(l.Count("SELECT stock FROM inventory WHERE sku = 'sku-1' AND tenant = 'tenant-a'") == 95);

  // The same key for another operation is another intent.
  l.Call("charge_account", Charge(100, "order-42"));
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 1);

  // Mutating the returned reservation does not change what is stored.
  first["structuredContent"]["reservation_id"] = "tampered";
  CHECK(l.Call("reserve_inventory",
               Reserve(5, "order-42"))["structuredContent"]["reservation_id"] == reservation);

  // No secret or payment data in what is stored: only the reservation's own fields.
  const std::set<std::string> allowed = {"reservation_id", "tenant",    "sku",
                                         "quantity",       "remaining", "executed_at"};
  for (const auto& [field, value] : retry["structuredContent"].items()) {
    CHECK(allowed.count(field) == 1);
  }

  // Close and reopen the ledger file, then reconcile the reservation by key: a committed
  // execution whose response was lost is found, with its result.
  l.Open();
  const Json found = l.Call("ledger_lookup", {{"tool", "reserve_inventory"}, {"key", "order-42"}});
  const Json& record = found["structuredContent"];
  CHECK(record["found"] == true);
  CHECK(record["state"] == "committed");
  CHECK(record["executions"] == 1);
  CHECK(record["attempts"].get<int64_t>() >= 1);
  CHECK(record["result"]["structuredContent"]["reservation_id"] == reservation);

  // Without a key nothing protects a retry: it reserves again.
  l.Call("reserve_inventory", Reserve(5, nullptr));
  l.Call("reserve_inventory", Reserve(5, nullptr));
  CHECK(l.Count("SELECT COUNT(*) FROM reservations") == 3);
}

TEST_CASE("a terminal failure is stored and replayed, it never runs again (IDEM-2)",
          "[ledger-tools][IDEM-2]") {
  Ledger l;
  const Json refused = l.Call("reserve_inventory", Reserve(101, "too-many"));
  CHECK(refused["structuredContent"]["error"]["type"] == "out_of_stock");
  const Json again = l.Call("reserve_inventory", Reserve(101, "too-many"));
  CHECK(Replayed(again));
  CHECK(again["isError"] == true);
  CHECK(l.Count("SELECT COUNT(*) FROM reservations") == 0);
}

TEST_CASE(
    "a replay whose stored result nests deeper than 128 levels is an error, and nothing "
    "runs again",
    "[ledger-tools][IDEM-2]") {
  Ledger l;
  l.Call("charge_account", Charge(1200, "deep-1"));
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  l.service()
      .Borrow()
      .db()
      .Prepare("UPDATE ledger SET result = ?1 WHERE key = 'deep-1'")
      .Bind(1, deep)
      .Run();
  const Json again = l.Call("charge_account", Charge(1200, "deep-1"));
  CHECK(again["isError"] == true);
  CHECK(again["structuredContent"]["error"]["type"] == "stored_result_unreadable");
  CHECK_THAT(again["content"][0]["text"].get<std::string>(),
             Catch::Contains("nested deeper than 128 levels"));
  CHECK(l.Count("SELECT COUNT(*) FROM charges") == 1);
}

TEST_CASE("ledger_lookup of an unknown key says nothing ran", "[ledger-tools]") {
  Ledger l;
  const Json found = l.Call("ledger_lookup", {{"tool", "charge_account"}, {"key", "nope"}});
  CHECK(found["structuredContent"]["found"] == false);
  CHECK_FALSE(found.contains("isError"));
}

TEST_CASE("ledger_lookup in a damaged ledger answers ledger_error and never that nothing ran",
          "[ledger-tools]") {
  Ledger l;
  REQUIRE_FALSE(l.Call("charge_account", Charge(700, "k-damaged")).contains("isError"));
  DamageTable(l.path(), "ledger");
  // A new thread reads through a new connection, so no cached page hides the damage.
  Json lookup;
  Json charge;
  Reconciled after_restart{Reconciled::Outcome::kDidNotHappen, Json()};
  std::thread reader([&] {
    lookup = l.Call("ledger_lookup", {{"tool", "charge_account"}, {"key", "k-damaged"}});
    charge = l.Call("charge_account", Charge(700, "k-damaged"));
    after_restart = l.Reconcile("charge_account", Charge(700, "k-damaged"));
  });
  reader.join();
  CHECK(lookup["isError"] == true);
  CHECK(lookup["structuredContent"]["error"]["type"] == "ledger_error");
  CHECK_FALSE(lookup["structuredContent"].contains("found"));
  // The same key, the same answer from the write path.
  CHECK(charge["structuredContent"]["error"]["type"] == "ledger_error");
  // A durable task under that key, recovered after a restart, is "unknown", not "did not
  // happen" (which would make it safe to run again).
  CHECK(after_restart.outcome == Reconciled::Outcome::kUnknown);
}

}  // namespace
}  // namespace keel::ledger_tools_test
