// TempLedger: a LedgerService over a fresh database file (keel.db) in its own TempDir, opened,
// checked and migrated as keel opens it at start-up; the directory goes with the fixture.
// OpenTestLedger() opens another LedgerService on a file (a second keel process on the same
// database, or one opened next to a task store). Both fail the test when the open fails.
// Header-only. The fixture itself is for the test's thread; the LedgerService it holds may
// be used from any thread (server/durable/ledger_service.h).
// Invariant: service() is never null.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "server/durable/ledger_service.h"

namespace keel {

// --idempotency-ttl's default (24 h): stored results outlive every test.
constexpr int64_t kTestLedgerTtlMs = 24LL * 3600 * 1000;

inline std::shared_ptr<LedgerService> OpenTestLedger(const std::string& path,
                                                     const std::string& owner,
                                                     int64_t ttl_ms = kTestLedgerTtlMs) {
  std::string error;
  int exit_code = 0;
  std::shared_ptr<LedgerService> service =
      LedgerService::Open(LedgerService::Options{path, ttl_ms, owner}, &error, &exit_code);
  INFO(error);
  REQUIRE(service != nullptr);
  return service;
}

class TempLedger {
 public:
  // `owner` names this process in claims (remote writes parse "keel-<pid>-..." owners).
  explicit TempLedger(std::string owner = "test-owner", int64_t ttl_ms = kTestLedgerTtlMs)
      : owner_(std::move(owner)),
        ttl_ms_(ttl_ms),
        service_(OpenTestLedger(path(), owner_, ttl_ms_)) {}

  const std::shared_ptr<LedgerService>& service() const { return service_; }
  LedgerService& operator*() const { return *service_; }
  LedgerService* operator->() const { return service_.get(); }

  std::string path() const { return dir_.File("keel.db"); }
  const TempDir& dir() const { return dir_; }

  // The file opened again by a new LedgerService, as a restarted keel opens it (the old one
  // is closed first, unless a caller still holds it).
  void Reopen() {
    service_.reset();
    service_ = OpenTestLedger(path(), owner_, ttl_ms_);
  }
  // Another process's LedgerService on the same file.
  std::shared_ptr<LedgerService> OpenAs(const std::string& owner) const {
    return OpenTestLedger(path(), owner, ttl_ms_);
  }

 private:
  TempDir dir_;
  std::string owner_;
  int64_t ttl_ms_;
  std::shared_ptr<LedgerService> service_;
};

}  // namespace keel
