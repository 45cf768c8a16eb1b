// CommitFaultDatabase: a Database that forwards to a real one, except that its next COMMIT
// can be made to lose its answer (DIST-3), as when a PostgreSQL connection dies while COMMIT
// runs: kCommittedAnswerLost commits and then throws SQLITE_IOERR; kLostBeforeCommit rolls
// back and then throws the same error. Either way the caller cannot tell which happened.
// One fault per arm(); then it forwards again.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ledger/database.h"

namespace keel {

class CommitFaultDatabase final : public Database {
 public:
  enum class Fault { kNone, kCommittedAnswerLost, kLostBeforeCommit };

  explicit CommitFaultDatabase(std::unique_ptr<Database> inner) : inner_(std::move(inner)) {}
  ~CommitFaultDatabase() override { ClearStatements(); }

  void arm(Fault fault) { fault_ = fault; }

  Dialect dialect() const override { return inner_->dialect(); }
  std::string Exec(const std::string& sql) override { return inner_->Exec(sql); }
  std::string Pragma(const std::string& name) override { return inner_->Pragma(name); }
  int64_t Changes() const override { return inner_->Changes(); }
  void SetBusyTimeout(std::chrono::milliseconds timeout) override {
    inner_->SetBusyTimeout(timeout);
  }
  void BeginImmediate() override { inner_->BeginImmediate(); }
  void Commit() override {
    const Fault fault = std::exchange(fault_, Fault::kNone);
    if (fault == Fault::kNone) return inner_->Commit();
    if (fault == Fault::kCommittedAnswerLost) {
      inner_->Commit();
    } else {
      inner_->Rollback();
    }
    throw SqliteError(10 /* SQLITE_IOERR */,
                      "the connection was lost while COMMIT ran: its outcome is unknown");
  }
  void Rollback() noexcept override { inner_->Rollback(); }
  bool InTransaction() const override { return inner_->InTransaction(); }
  int64_t ClockMs() override { return inner_->ClockMs(); }

 protected:
  std::unique_ptr<StatementCursor> NewCursor(std::string_view sql) override {
    return NewCursorOf(*inner_, sql);
  }

 private:
  std::unique_ptr<Database> inner_;
  Fault fault_ = Fault::kNone;
};

}  // namespace keel
