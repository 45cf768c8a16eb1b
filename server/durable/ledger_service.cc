#include "server/durable/ledger_service.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include "ledger/database_check.h"
#include "ledger/fingerprint.h"
#include "ledger/instance_registry.h"
#include "ledger/schema.h"
#include "protocol/bounded_json.h"
#include "protocol/iso_time.h"
#include "server/app/exit_codes.h"
#include "server/catalog/tool.h"
#include "server/runtime/suspend.h"

namespace keel {
namespace {

// How long the start-up page scan (quick_check) may take. An MCP host waits for keel's
// first answer; 2 s is short next to its timeouts and reads a few hundred MB on an idle
// machine, far more than keel's file holds (keys are kept for --idempotency-ttl, a day).
// A larger file is checked in part, with a warning, rather than delaying start-up.
constexpr std::chrono::milliseconds kStartupScanBudget{2000};

// DC-1: a file keel cannot write, or whose pages are damaged, is refused at
// start-up; served, it would answer every keyed write `ledger_error` "retry", which never
// succeeds. Empty when the file is usable.
std::string Unusable(Database& db, const std::string& path) {
  const DatabaseCheck check =
      CheckDatabase(db, std::chrono::steady_clock::now() + kStartupScanBudget);
  switch (check.verdict) {
    case DatabaseCheck::Verdict::kUsable:
      break;
    case DatabaseCheck::Verdict::kNotWritable:
      return "cannot write the database " + path + ": " + check.problem;
    case DatabaseCheck::Verdict::kDamaged:
      return "the database " + path + " is damaged (" + check.problem +
             "); restore it from a backup, or use another --db";
  }
  if (!check.write_proven) {
    spdlog::warn(
        "{}: another process held the write lock at start-up; could not prove the "
        "file writable",
        path);
  }
  if (!check.scan_complete) {
    spdlog::warn(
        "{}: the start-up check of its pages stopped after {} ms; the part it read "
        "is sound",
        path, kStartupScanBudget.count());
  }
  return {};
}

// The stored result with the replay marked in its `_meta` (IDEM-4: `stored` is already a
// fresh copy parsed from the ledger).
Json MarkReplay(Json stored, const LedgerRecord& record) {
  if (!stored.is_object()) stored = Json::object();
  Json& meta = stored["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta["dev.keel/replayed"] = true;
  meta["dev.keel/original_time"] = IsoTime(record.updated_ms);
  meta["dev.keel/attempts"] = record.attempts;
  return stored;
}

Json KeyError(const std::string& type, const std::string& text, const std::string& tool,
              const std::string& key, int64_t retry_after_ms = 0) {
  Json error = {{"type", type}, {"tool", tool}, {"idempotency_key", key}};
  if (retry_after_ms > 0) error["retry_after_ms"] = retry_after_ms;
  return ErrorResult(text, error);
}

}  // namespace

std::unique_ptr<LedgerService> LedgerService::Open(Options options, std::string* error,
                                                   int* exit_code) {
  const std::string shown = Database::Describe(options.path);
  // A PostgreSQL server that cannot be reached is unavailable (69), not a file keel cannot
  // create (73).
  const int cannot_open =
      Database::IsPostgresUrl(options.path) ? kExitUnavailable : kExitCantCreate;
  std::unique_ptr<Database> db = Database::Open(options.path, error);
  if (!db) {
    *error = "cannot open the database " + shown + ": " + *error;
    *exit_code = cannot_open;
    return nullptr;
  }
  // Checked before migrating: a file that cannot be written (or is damaged) is a file keel
  // cannot use (73), whatever schema version it has.
  if (std::string problem = Unusable(*db, options.path); !problem.empty()) {
    *error = std::move(problem);
    *exit_code = kExitCantCreate;
    return nullptr;
  }
  std::string why;
  switch (Migrate(*db, &why)) {
    case MigrateStatus::kOk:
      break;
    case MigrateStatus::kNewerThanBinary:
      *error = "the database " + shown + " was written by a newer keel (schema newer " +
               "than version " + std::to_string(SchemaVersion(db->dialect())) +
               "); use that keel or another --db";
      *exit_code = kExitConfig;
      return nullptr;
    case MigrateStatus::kError:
      *error = "cannot prepare the database " + shown + ": " + why;
      *exit_code = kExitConfig;
      return nullptr;
  }
  std::unique_ptr<Database> writer = Database::Open(options.path, error);
  if (!writer) {
    *error = "cannot open the database " + shown + ": " + *error;
    *exit_code = cannot_open;
    return nullptr;
  }
  options.connections = std::max<size_t>(options.connections, 1);
  std::unique_ptr<LedgerService> service(new LedgerService(std::move(options)));
  service->group_ = std::make_unique<CommitGroup>(&service->writer_, std::move(writer));
  service->finished_ = std::make_unique<FinishedRows>();
  // The connection that migrated is the pool's first.
  service->all_.push_back(service->OpenPooled(std::move(db)));
  service->idle_.push_back(service->all_.back().get());
  return service;
}

LedgerService::Lease::Lease(Lease&& other) noexcept
    : owner_(other.owner_), pooled_(other.pooled_), job_(other.job_) {
  other.pooled_ = nullptr;
}

LedgerService::Lease::~Lease() {
  if (pooled_ != nullptr) owner_->GiveBack(pooled_, job_);
}

Database& LedgerService::Lease::db() const { return *pooled_->db; }
MutationLedger& LedgerService::Lease::ledger() const { return *pooled_->ledger; }

std::unique_ptr<PooledConnection> LedgerService::OpenPooled(std::unique_ptr<Database> db) {
  auto pooled = std::make_unique<PooledConnection>();
  pooled->db = std::move(db);
  pooled->ledger = std::make_unique<MutationLedger>(*pooled->db, LedgerOptions());
  return pooled;
}

LedgerService::Lease LedgerService::Borrow(std::chrono::milliseconds wait) {
  const void* const job = CurrentJob();
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = held_.find(job); it != held_.end()) {
    ++it->second.leases;  // the job's own, again: never wait on oneself
    return Lease(this, it->second.pooled, job);
  }
  for (;;) {
    if (!idle_.empty()) {
      PooledConnection* pooled = idle_.back();  // the most recently used: its cache is warm
      idle_.pop_back();
      held_.emplace(job, Holding{pooled, 1});
      return Lease(this, pooled, job);
    }
    if (all_.size() + opening_ < options_.connections) break;
    if (returned_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        all_.size() + opening_ >= options_.connections) {
      throw SqliteError(SQLITE_BUSY,
                        "all " + std::to_string(options_.connections) +
                            " database connections (--db-connections) were in use for " +
                            std::to_string(wait.count()) + " ms");
    }
  }
  ++opening_;
  lock.unlock();
  std::string error;
  std::unique_ptr<Database> db = Database::Open(options_.path, &error);
  std::unique_ptr<PooledConnection> pooled = db ? OpenPooled(std::move(db)) : nullptr;
  lock.lock();
  --opening_;
  if (!pooled) {
    returned_.notify_one();  // the place it reserved is free again
    throw SqliteError(0, "cannot open " + Database::Describe(options_.path) + ": " + error);
  }
  PooledConnection* raw = pooled.get();
  all_.push_back(std::move(pooled));
  held_.emplace(job, Holding{raw, 1});
  return Lease(this, raw, job);
}

void LedgerService::GiveBack(PooledConnection* pooled, const void* job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(job);
    if (it == held_.end() || --it->second.leases > 0) return;
    held_.erase(it);
    idle_.push_back(pooled);
  }
  returned_.notify_one();
}

size_t LedgerService::connections_open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size();
}

size_t LedgerService::connections_lent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size() - idle_.size();
}

LedgerService::~LedgerService() {
  if (group_ && group_->units() > 0) {
    spdlog::info("ledger: {} write(s) committed in {} transaction(s)", group_->units(),
                 group_->transactions());
  }
}

MutationLedger::Options LedgerService::LedgerOptions() {
  MutationLedger::Options options;
  options.owner = options_.owner;
  options.ttl_ms = options_.ttl_ms;
  options.writer = &writer_;
  options.group = group_.get();
  options.finished = finished_.get();
  options.kill_switch = &kill_switch_;
  return options;
}

std::string LedgerService::JoinInstances() {
  if (!spans_machines() || heartbeat_) return {};
  std::string error;
  heartbeat_ = InstanceHeartbeat::Start(options_.path, ThisInstance(options_.owner), &error);
  return heartbeat_ ? std::string() : error;
}

bool LedgerService::OwnerGone(const std::string& owner) {
  if (owner == options_.owner) return false;
  if (!spans_machines()) return LedgerOwnerGone(owner, options_.owner);
  try {
    const Lease lease = Borrow();
    return InstanceRegistry(lease.db()).Gone(owner);
  } catch (const std::exception& e) {
    spdlog::warn("keel_instances cannot be read ({}): {} counts as alive", e.what(), owner);
    return false;
  }
}

bool LedgerOwnerGone(const std::string& owner, const std::string& self) {
  // "keel-<pid>-<random>"
  if (owner.rfind("keel-", 0) != 0) return false;
  const size_t end = owner.find('-', 5);
  const std::string digits = owner.substr(5, end == std::string::npos ? end : end - 5);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  const pid_t pid = static_cast<pid_t>(std::stol(digits));
  if (pid <= 0) return false;
  if (pid == getpid()) return owner != self && !self.empty();
  return kill(pid, 0) == -1 && errno == ESRCH;
}

Json LedgerService::RunKeyed(const std::string& tool, const std::string& key, const Json& arguments,
                             std::chrono::milliseconds wait,
                             const std::function<EffectOutcome(Database&)>& effect,
                             const BlockedAnswer& blocked) {
  const std::string fingerprint = Fingerprint(tool, arguments);
  std::optional<Lease> lease;
  try {
    lease.emplace(Borrow(wait));
  } catch (const SqliteError& e) {
    MutationLedger::Outcome busy;
    busy.status = (e.code & 0xff) == SQLITE_BUSY ? MutationLedger::Status::kBusy
                                                 : MutationLedger::Status::kError;
    busy.error = e.what();
    return LedgerAnswer(std::move(busy), tool, key);
  }
  MutationLedger::Outcome outcome =
      lease->ledger().RunInDatabase(tool, key, fingerprint, wait, effect);
  if (outcome.status == MutationLedger::Status::kExecuted) return outcome.result;
  if (outcome.status == MutationLedger::Status::kBlocked) return blocked(outcome.kill_switch);
  return LedgerAnswer(std::move(outcome), tool, key);
}

Json LedgerAnswer(MutationLedger::Outcome outcome, const std::string& tool,
                  const std::string& key) {
  switch (outcome.status) {
    case MutationLedger::Status::kExecuted:
      return outcome.result;
    case MutationLedger::Status::kReplayed:
      if (!outcome.result.is_object()) {
        // The row is terminal but its stored result reads as null (mutation_ledger.h): the
        // file was changed under keel. The call ran; its answer is lost, not re-run.
        return KeyError("stored_result_unreadable",
                        "A call with idempotency key '" + key + "' for tool '" + tool +
                            "' already ran, but its stored result cannot be read (not JSON, or "
                            "nested deeper than " +
                            std::to_string(kMaxJsonDepth) +
                            " levels); nothing was executed again. Look it up with "
                            "ledger_lookup.",
                        tool, key);
      }
      return MarkReplay(std::move(outcome.result), outcome.record);
    case MutationLedger::Status::kMismatch:
      return KeyError("idempotency_key_mismatch",
                      "Idempotency key '" + key +
                          "' was already used with different arguments "
                          "for tool '" +
                          tool +
                          "'; nothing was executed. Use a new key for a new "
                          "intent, or repeat the original arguments to get the original result.",
                      tool, key);
    case MutationLedger::Status::kInProgress:
      return KeyError("idempotency_in_progress",
                      "A call with idempotency key '" + key + "' for tool '" + tool +
                          "' is still running elsewhere; nothing was executed. Retry with the "
                          "same key and arguments after retry_after_ms.",
                      tool, key, std::max<int64_t>(outcome.retry_after_ms, 1));
    case MutationLedger::Status::kNeedsReconciliation:
      return KeyError("needs_reconciliation",
                      "An earlier call with idempotency key '" + key + "' for tool '" + tool +
                          "' ended without a known outcome; nothing was executed. Look it up "
                          "with ledger_lookup before deciding what to do.",
                      tool, key);
    case MutationLedger::Status::kBusy:
      return KeyError("ledger_busy",
                      "The ledger was busy with another writer; nothing was executed. Retry "
                      "with the same key and arguments.",
                      tool, key, std::max<int64_t>(outcome.retry_after_ms, 50));
    case MutationLedger::Status::kBlocked:  // RunKeyed answers it with the tool's own words
    case MutationLedger::Status::kError:
      break;
  }
  spdlog::error("ledger error for {} key {}: {}", tool, key, outcome.error);
  return KeyError("ledger_error",
                  "The ledger failed; nothing was committed. Retry with the same key and "
                  "arguments.",
                  tool, key, 100);
}

Json LedgerService::RunUnkeyed(const std::function<EffectOutcome(Database&)>& effect,
                               const BlockedAnswer& blocked) {
  try {
    const Lease lease = Borrow();
    Database& db = lease.db();
    WriterGate::Hold writer;
    if (!writer_.Enter(std::chrono::milliseconds(5000), &writer)) {
      return ErrorResult("The ledger was busy with another writer; nothing was executed.",
                         Json{{"type", "ledger_busy"}, {"retry_after_ms", 100}});
    }
    WriteTransaction transaction(db);
    // Read under the write lock: nothing can turn the switch on before this commits.
    const KillSwitchState state = ReadKillSwitch(db);
    if (state.blocked) return blocked(state);  // rolled back by the destructor
    EffectOutcome outcome = effect(db);
    if (outcome.transient) return outcome.result;  // rolled back by the destructor
    transaction.Commit();
    return outcome.result;
  } catch (const SqliteError& e) {
    spdlog::error("unkeyed mutation failed: {}", e.what());
    return ErrorResult("The database failed; nothing was committed.",
                       Json{{"type", "ledger_error"}, {"retry_after_ms", 100}});
  }
}

}  // namespace keel
