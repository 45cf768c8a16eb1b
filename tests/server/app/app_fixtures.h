// Fixtures for the server/app tests: flags with a --db in a temporary directory, and that
// database opened the way a serving keel opens it. Header-only; one per test case.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "fakes/temp_dir.h"
#include "server/app/cli_options.h"
#include "server/durable/ledger_service.h"

namespace keel::app_test {

class TempKeelDb {
 public:
  TempKeelDb() { flags_.db_path = dir_.File("keel.db"); }

  const TempDir& dir() const { return dir_; }
  // Flags as ParseCommandLine leaves them without arguments, with --db set to the file.
  CliOptions& flags() { return flags_; }
  const std::string& path() const { return flags_.db_path; }

  // The file opened (and migrated) as the ledger of process `owner`.
  std::shared_ptr<LedgerService> Open(const std::string& owner = "keel-test",
                                      int64_t ttl_ms = 24LL * 3600 * 1000) const {
    std::string error;
    int exit_code = 0;
    std::shared_ptr<LedgerService> ledger =
        LedgerService::Open({path(), ttl_ms, owner}, &error, &exit_code);
    if (!ledger) throw std::runtime_error("cannot open the test database: " + error);
    return ledger;
  }

 private:
  TempDir dir_;
  CliOptions flags_;
};

}  // namespace keel::app_test
