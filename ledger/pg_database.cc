#include "ledger/pg_database.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include "ledger/pq_api.h"

namespace keel {

namespace {

// The SQLite result codes callers test (sqlite3.h is not needed for five numbers).
constexpr int kError = 1;
constexpr int kAbort = 4;
constexpr int kBusy = 5;
constexpr int kIoError = 10;
constexpr int kConstraint = 19;
constexpr int kMisuse = 21;

int CodeOf(PGconn* conn, const PGresult* result) {
  if (Pq().status(conn) != CONNECTION_OK) return kIoError;
  const char* state =
      result != nullptr ? Pq().result_error_field(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state == nullptr) return kError;
  const std::string_view s(state);
  // lock_not_available, serialization_failure, deadlock_detected, query_canceled (the
  // statement_timeout): the ledger cannot answer now; later it may.
  if (s == "55P03" || s == "40001" || s == "40P01" || s == "57014") return kBusy;
  if (s.substr(0, 2) == "23") return kConstraint;
  if (s.substr(0, 2) == "08") return kIoError;  // connection exception
  return kError;
}

// libpq's messages span lines ("...\n\tIs the server running...?\n"): one line for logs.
std::string OneLine(const char* text) {
  std::string line;
  for (const char* c = text; c != nullptr && *c != '\0'; ++c) {
    if (*c == '\n' || *c == '\t') {
      if (!line.empty() && line.back() != ' ') line += (*c == '\n' ? "; " : " ");
    } else {
      line += *c;
    }
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == ';')) line.pop_back();
  return line;
}

[[noreturn]] void Throw(PGconn* conn, const PGresult* result, std::string_view what) {
  std::string message(what);
  message += ": ";
  const char* text = result != nullptr ? Pq().result_error_message(result) : "";
  if (text == nullptr || *text == '\0') text = Pq().error_message(conn);
  const std::string line = OneLine(text);
  message += line.empty() ? "unknown PostgreSQL error" : line;
  if (const char* state = result ? Pq().result_error_field(result, PG_DIAG_SQLSTATE) : nullptr) {
    message += " [SQLSTATE ";
    message += state;
    message += "]";
  }
  throw SqliteError(CodeOf(conn, result), message);
}

// PostgreSQL's notices ("there is no transaction in progress"...) go to keel's log, never
// to stderr or stdout unannounced.
void LogNotice(void*, const char* message) {
  std::string text(message);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  spdlog::debug("postgresql: {}", text);
}

}  // namespace

// One prepared statement: text parameters, the rows of its last run.
class PgCursor final : public StatementCursor {
 public:
  PgCursor(PgDatabase* db, std::string name, std::string text, int parameters, std::string sql)
      : db_(db),
        name_(std::move(name)),
        text_(std::move(text)),
        sql_(std::move(sql)),
        values_(parameters),
        generation_(db->generation_) {}
  ~PgCursor() override { Clear(); }

  void Bind(int index, int64_t value) override { Slot(index) = std::to_string(value); }
  void Bind(int index, std::string_view value) override { Slot(index) = std::string(value); }
  void BindNull(int index) override { Slot(index).reset(); }

  bool Step() override {
    if (!ran_) Execute();
    if (rows_ == nullptr) return false;
    ++row_;
    return row_ < Pq().ntuples(rows_);
  }
  int64_t Int64(int column) const override {
    if (IsNull(column)) return 0;
    const char* value = Pq().getvalue(rows_, row_, column);
    // A boolean (`x IS NULL`, a comparison) reads as SQLite gives it: 1 or 0.
    if (value[0] == 't' && value[1] == '\0') return 1;
    if (value[0] == 'f' && value[1] == '\0') return 0;
    return std::strtoll(value, nullptr, 10);
  }
  std::string Text(int column) const override {
    if (IsNull(column)) return {};
    return std::string(Pq().getvalue(rows_, row_, column),
                       static_cast<size_t>(Pq().getlength(rows_, row_, column)));
  }
  bool IsNull(int column) const override {
    return rows_ == nullptr || Pq().getisnull(rows_, row_, column) == 1;
  }
  void Reset() noexcept override {
    Clear();
    for (auto& value : values_) value.reset();
  }

 private:
  std::optional<std::string>& Slot(int index) {
    if (index < 1 || index > static_cast<int>(values_.size())) {
      throw SqliteError(kMisuse, "bind: no parameter ?" + std::to_string(index) + " in " + sql_);
    }
    return values_[static_cast<size_t>(index - 1)];
  }
  void Execute() {
    db_->EnsureConnected();
    if (generation_ != db_->generation_) {
      // Prepared on a connection that was lost: the new one has never seen it.
      db_->PrepareOn(name_, text_, static_cast<int>(values_.size()), sql_);
      generation_ = db_->generation_;
    }
    std::vector<const char*> pointers;
    pointers.reserve(values_.size());
    for (const auto& value : values_) pointers.push_back(value ? value->c_str() : nullptr);
    PGresult* result =
        Pq().exec_prepared(db_->conn_, name_.c_str(), static_cast<int>(pointers.size()),
                           pointers.data(), nullptr, nullptr, 0);
    ran_ = true;
    const ExecStatusType status = Pq().result_status(result);
    if (status == PGRES_TUPLES_OK) {
      rows_ = result;
      row_ = -1;
      return;
    }
    if (status == PGRES_COMMAND_OK) {
      const char* changed = Pq().cmd_tuples(result);
      if (changed != nullptr && *changed != '\0')
        db_->changes_ = std::strtoll(changed, nullptr, 10);
      Pq().clear(result);
      return;
    }
    try {
      Throw(db_->conn_, result, sql_);
    } catch (...) {
      Pq().clear(result);
      throw;
    }
  }
  void Clear() noexcept {
    if (rows_ != nullptr) Pq().clear(rows_);
    rows_ = nullptr;
    row_ = -1;
    ran_ = false;
  }

  PgDatabase* db_;
  std::string name_;
  std::string text_;  // as sent to PostgreSQL ($N)
  std::string sql_;   // as keel wrote it (?N), for messages
  std::vector<std::optional<std::string>> values_;
  uint64_t generation_;  // the connection it was prepared on
  PGresult* rows_ = nullptr;
  int row_ = -1;
  bool ran_ = false;
};

std::unique_ptr<PgDatabase> PgDatabase::Connect(const std::string& url, std::string* error) {
  // libpq is loaded now, the first time it is needed (ledger/pq_api.h says why).
  if (const std::string& why = PqLoadError(); !why.empty()) {
    *error = why;
    return nullptr;
  }
  // Without a connect_timeout libpq waits for TCP's own (minutes) when the server's host is
  // gone, and every worker that writes would wait with it; the URL's own is kept.
  std::string with_timeout = url;
  if (url.find("connect_timeout=") == std::string::npos) {
    with_timeout += (url.find('?') == std::string::npos ? "?" : "&") +
                    std::string("connect_timeout=") + std::to_string(kConnectTimeoutS);
  }
  // Operators tell keel's connections from other clients' in pg_stat_activity (and size
  // --db-connections against them); a URL that names itself keeps its name.
  if (url.find("application_name=") == std::string::npos) {
    with_timeout += (with_timeout.find('?') == std::string::npos ? "?" : "&") +
                    std::string("fallback_application_name=keel");
  }
  PGconn* conn = Pq().connectdb(with_timeout.c_str());
  if (conn == nullptr) {
    *error = "cannot allocate a PostgreSQL connection";
    return nullptr;
  }
  if (Pq().status(conn) != CONNECTION_OK) {
    const std::string why = OneLine(Pq().error_message(conn));
    *error = why.empty() ? "cannot connect to PostgreSQL" : why;
    Pq().finish(conn);
    return nullptr;
  }
  Pq().set_notice_processor(conn, &LogNotice, nullptr);
  std::unique_ptr<PgDatabase> db(new PgDatabase(conn));
  try {
    // Times are keel's (milliseconds since the epoch, as integers); text is UTF-8.
    db->Run("SET client_encoding = 'UTF8'");
    db->SetBusyTimeout(std::chrono::milliseconds(5000));  // SQLite's default, kept the same
    // A statement_timeout the URL or the role sets (options=-c statement_timeout=...) is
    // kept; without one, no statement of keel's may hang a worker forever.
    Statement current = db->Prepare("SELECT current_setting('statement_timeout')");
    db->own_statement_timeout_ = current.Step() && current.Text(0) == "0";
    if (db->own_statement_timeout_) db->Run(kStatementTimeoutSql);
  } catch (const SqliteError& e) {
    *error = e.what();
    return nullptr;
  }
  return db;
}

PgDatabase::~PgDatabase() {
  ClearStatements();  // their results first; the server forgets the prepared ones with us
  Pq().finish(conn_);
}

std::string PgDatabase::Rewrite(std::string_view sql, int* parameters) {
  std::string out;
  out.reserve(sql.size() + 8);
  *parameters = 0;
  bool quoted = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') quoted = !quoted;  // '' inside a literal toggles twice
    if (quoted || c != '?' || i + 1 >= sql.size() ||
        !std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += c;
      continue;
    }
    int n = 0;
    out += '$';
    while (i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      n = n * 10 + (sql[i + 1] - '0');
      out += sql[++i];
    }
    *parameters = std::max(*parameters, n);
  }
  return out;
}

std::unique_ptr<StatementCursor> PgDatabase::NewCursor(std::string_view sql) {
  int parameters = 0;
  std::string text = Rewrite(sql, &parameters);
  std::string name = "keel_" + std::to_string(next_statement_++);
  EnsureConnected();
  PrepareOn(name, text, parameters, sql);
  return std::make_unique<PgCursor>(this, std::move(name), std::move(text), parameters,
                                    std::string(sql));
}

void PgDatabase::PrepareOn(const std::string& name, const std::string& text, int parameters,
                           std::string_view sql) {
  PGresult* result = Pq().prepare(conn_, name.c_str(), text.c_str(), parameters, nullptr);
  if (Pq().result_status(result) != PGRES_COMMAND_OK) {
    try {
      Throw(conn_, result, "prepare " + std::string(sql));
    } catch (...) {
      Pq().clear(result);
      throw;
    }
  }
  Pq().clear(result);
}

void PgDatabase::EnsureConnected() {
  if (Pq().status(conn_) == CONNECTION_OK) return;
  if (in_transaction_) {
    // Never on a new connection: the statement would run outside the transaction it belongs to.
    throw SqliteError(kIoError,
                      "the connection to PostgreSQL was lost during a transaction; nothing of "
                      "it was committed");
  }
  Pq().reset(conn_);
  if (Pq().status(conn_) != CONNECTION_OK) {
    throw SqliteError(kIoError,
                      "cannot connect to PostgreSQL again: " + OneLine(Pq().error_message(conn_)));
  }
  ++generation_;
  lock_timeout_ms_ = -1;
  spdlog::warn("the connection to PostgreSQL was lost; connected again");
  RunHere("SET client_encoding = 'UTF8'");
  if (own_statement_timeout_) RunHere(kStatementTimeoutSql);
  SetBusyTimeout(std::chrono::milliseconds(wanted_timeout_ms_));
}

void PgDatabase::Run(const char* sql) {
  EnsureConnected();
  RunHere(sql);
}

void PgDatabase::RunHere(const char* sql) {
  PGresult* result = Pq().exec(conn_, sql);
  const ExecStatusType status = Pq().result_status(result);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    Pq().clear(result);
    return;
  }
  try {
    Throw(conn_, result, sql);
  } catch (...) {
    Pq().clear(result);
    throw;
  }
}

void PgDatabase::RunScript(std::span<const std::string_view> statements) {
  // One simple-protocol query: PostgreSQL runs its statements in order, in the open
  // transaction, and stops at the first error (which is the error returned).
  std::string script;
  for (std::string_view sql : statements) {
    if (!script.empty()) script += "; ";
    script += sql;
  }
  Run(script.c_str());
}

std::string PgDatabase::Exec(const std::string& sql) {
  try {
    Run(sql.c_str());
    return {};
  } catch (const SqliteError& e) {
    return e.what();
  }
}

int64_t PgDatabase::ClockMs() {
  const auto now = std::chrono::steady_clock::now();
  if (clock_read_ && now - clock_read_at_ < std::chrono::milliseconds(kClockReadEveryMs)) {
    return clock_ms_ +
           std::chrono::duration_cast<std::chrono::milliseconds>(now - clock_read_at_).count();
  }
  Statement clock = Prepare("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint");
  if (!clock.Step()) throw SqliteError(kError, "the server gave no clock_timestamp()");
  clock_ms_ = clock.Int64(0);
  clock_read_at_ = now;
  clock_read_ = true;
  return clock_ms_;
}

void PgDatabase::SetBusyTimeout(std::chrono::milliseconds timeout) {
  // lock_timeout 0 would mean "wait forever"; SQLite's 0 means "fail at once". Above a
  // second it is rounded up to a tenth of a second, so that the budgets of successive
  // writers (a deadline's remainder) mostly ask for a value already set: one SET saved per
  // write transaction, for a wait at most 0.1 s longer than asked.
  int64_t ms = std::clamp<int64_t>(timeout.count(), 1, INT32_MAX);
  if (ms > 1000) ms = std::min<int64_t>((ms + 99) / 100 * 100, INT32_MAX);
  wanted_timeout_ms_ = ms;
  if (ms == lock_timeout_ms_ && Pq().status(conn_) == CONNECTION_OK) return;
  Run(("SET lock_timeout = " + std::to_string(ms)).c_str());
  // A SET inside a transaction is undone if the transaction rolls back: remember it only
  // outside one.
  lock_timeout_ms_ = InTransaction() ? -1 : ms;
}

void PgDatabase::BeginImmediate() {
  in_transaction_ = false;  // any earlier one was ended, or was lost with its connection
  // One round trip: a simple-protocol query of two statements, the lock taken in the
  // transaction the BEGIN opened.
  static const std::string begin = "BEGIN; SELECT pg_advisory_xact_lock(" +
                                   std::to_string(kWriterLock) + ", hashtext(current_schema()))";
  try {
    Run(begin.c_str());
  } catch (...) {
    Rollback();  // BEGIN IMMEDIATE that fails leaves no transaction behind, here too
    throw;
  }
  in_transaction_ = true;
}

void PgDatabase::Commit() {
  in_transaction_ = false;
  if (Pq().status(conn_) != CONNECTION_OK) {
    throw SqliteError(kIoError,
                      "COMMIT: the connection to PostgreSQL was lost before it; nothing was "
                      "committed");
  }
  PGresult* result = Pq().exec(conn_, "COMMIT");
  if (Pq().status(conn_) != CONNECTION_OK) {
    Pq().clear(result);
    // Sent, perhaps applied, answer lost: the caller must find out, never assume.
    throw SqliteError(kIoError,
                      "COMMIT: the connection to PostgreSQL was lost while it ran; whether it "
                      "committed is unknown");
  }
  const bool committed = Pq().result_status(result) == PGRES_COMMAND_OK &&
                         std::strcmp(Pq().cmd_status(result), "COMMIT") == 0;
  if (committed) {
    Pq().clear(result);
    return;
  }
  if (Pq().result_status(result) == PGRES_COMMAND_OK) {
    Pq().clear(result);  // COMMIT of a failed transaction: PostgreSQL rolled it back
    throw SqliteError(kAbort, "COMMIT: the transaction had failed and was rolled back");
  }
  try {
    Throw(conn_, result, "COMMIT");
  } catch (...) {
    Pq().clear(result);
    throw;
  }
}

void PgDatabase::Rollback() noexcept {
  in_transaction_ = false;
  if (!InTransaction()) return;
  Pq().clear(Pq().exec(conn_, "ROLLBACK"));
}

bool PgDatabase::InTransaction() const {
  if (Pq().status(conn_) != CONNECTION_OK) return false;  // lost with the connection
  const PGTransactionStatusType status = Pq().transaction_status(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

}  // namespace keel
