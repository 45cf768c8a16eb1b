// The request-state keys in the --db (MRTR-1): made once and shared by every keel on the
// database, rotated after their period with the previous key kept.
#include "server/durable/state_keys.h"

#include <catch2/catch.hpp>

#include "fakes/temp_ledger.h"

namespace keel::state_keys_test {
namespace {

constexpr int64_t kDay = 24 * 3600 * 1000;

}  // namespace

TEST_CASE("the keys are made once and every later load gets the same", "[MRTR-1]") {
  TempLedger ledger;
  const StateKeys first = LoadStateKeys(ledger->Borrow().db(), 1000, 30 * kDay);
  CHECK(first.current.size() == 32);
  CHECK(first.previous.empty());
  const StateKeys again = LoadStateKeys(ledger->Borrow().db(), 2000, 30 * kDay);
  CHECK(again.current == first.current);
  CHECK(again.previous.empty());
}

TEST_CASE("an old key is rotated: the new one seals, the old one still opens", "[MRTR-1]") {
  TempLedger ledger;
  const StateKeys first = LoadStateKeys(ledger->Borrow().db(), 0, 30 * kDay);
  const StateKeys rotated = LoadStateKeys(ledger->Borrow().db(), 30 * kDay, 30 * kDay);
  CHECK(rotated.current != first.current);
  CHECK(rotated.previous == first.current);
  const StateKeys twice = LoadStateKeys(ledger->Borrow().db(), 60 * kDay, 30 * kDay);
  CHECK(twice.previous == rotated.current);
}

TEST_CASE("keys without a database are random and never repeat", "[MRTR-1]") {
  const StateKeys a = EphemeralStateKeys();
  const StateKeys b = EphemeralStateKeys();
  CHECK(a.current.size() == 32);
  CHECK(a.current != b.current);
}

}  // namespace keel::state_keys_test
