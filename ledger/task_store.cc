#include "ledger/task_store.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "protocol/bounded_json.h"

namespace keel {

namespace {

// The columns ReadRow() maps, in its order: every query that returns tasks starts here.
constexpr std::string_view kSelectTask =
    "SELECT seq, task_id, tool, status, status_message, created_ms, updated_ms, ttl_ms, "
    "poll_interval_ms, request, idempotency_key, fingerprint, result, error, cancel_phase, "
    "late_outcome, owner, owner_pid, lease_until_ms, input_requests, input_answers FROM tasks ";

constexpr std::string_view kInsertTask =
    "INSERT INTO tasks(task_id, tool, status, status_message, created_ms, updated_ms, ttl_ms, "
    "expires_ms, poll_interval_ms, request, idempotency_key, fingerprint, owner, owner_pid, "
    "lease_until_ms, input_answers) "
    "VALUES(?1, ?2, 'working', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";

std::string SelectTasks(std::string_view rest) {
  return std::string(kSelectTask) + std::string(rest);
}

// Invalid UTF-8 is replaced rather than thrown: no exception but SqliteError leaves here.
std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A null Json is stored as NULL and read back as null.
void BindJson(Statement& stmt, int index, const Json& value) {
  if (value.is_null()) {
    stmt.BindNull(index);
  } else {
    stmt.Bind(index, Dump(value));
  }
}

// An empty key or fingerprint is stored as NULL, so keyless tasks never meet in the
// (tool, idempotency_key) index.
void BindOptionalText(Statement& stmt, int index, std::string_view text) {
  if (text.empty()) {
    stmt.BindNull(index);
  } else {
    stmt.Bind(index, text);
  }
}

// Parsed from the stored text on every read: the caller owns a fresh copy. Text that is not
// JSON, or nests deeper than anything keel reads (bounded_json.h), reads as null.
Json ParseStoredJson(const Statement& row, int column) {
  if (row.IsNull(column)) return nullptr;
  return ParseBoundedJson(row.Text(column)).value;
}

CancelPhase ParseCancelPhase(std::string_view name) {
  if (name == "requested") return CancelPhase::kRequested;
  if (name == "observed") return CancelPhase::kObserved;
  if (name == "finished_after_cancel") return CancelPhase::kFinishedAfterCancel;
  return CancelPhase::kNone;  // the CHECK constraint admits nothing else
}

TaskRecord ReadRow(const Statement& row) {
  TaskRecord task;
  task.seq = row.Int64(0);
  task.task_id = row.Text(1);
  task.tool = row.Text(2);
  // The CHECK constraint admits only the five names.
  task.status = ParseTaskStatus(row.Text(3)).value_or(TaskStatus::kWorking);
  task.status_message = row.Text(4);
  task.created_ms = row.Int64(5);
  task.updated_ms = row.Int64(6);
  if (!row.IsNull(7)) task.ttl_ms = row.Int64(7);
  task.poll_interval_ms = row.Int64(8);
  task.request = ParseStoredJson(row, 9);
  task.idempotency_key = row.Text(10);  // NULL reads as empty
  task.fingerprint = row.Text(11);
  task.result = ParseStoredJson(row, 12);
  task.error = ParseStoredJson(row, 13);
  task.cancel_phase = ParseCancelPhase(row.Text(14));
  task.late_outcome = ParseStoredJson(row, 15);
  task.owner = row.Text(16);
  task.owner_pid = row.Int64(17);
  task.lease_until_ms = row.Int64(18);
  task.input_requests = ParseStoredJson(row, 19);
  task.input_answers = ParseStoredJson(row, 20);
  return task;
}

std::optional<TaskRecord> FindById(Database& db, std::string_view task_id) {
  Statement row = db.Prepare(SelectTasks("WHERE task_id = ?1"));
  row.Bind(1, task_id);
  if (!row.Step()) return std::nullopt;
  return ReadRow(row);
}

std::optional<TaskRecord> FindByKey(Database& db, std::string_view tool, std::string_view key) {
  Statement row = db.Prepare(SelectTasks("WHERE tool = ?1 AND idempotency_key = ?2"));
  row.Bind(1, tool).Bind(2, key);
  if (!row.Step()) return std::nullopt;
  return ReadRow(row);
}

std::vector<TaskRecord> ReadAll(Statement& rows) {
  std::vector<TaskRecord> tasks;
  while (rows.Step()) tasks.push_back(ReadRow(rows));
  return tasks;
}

void Insert(Database& db, const TaskRecord& task) {
  Statement insert = db.Prepare(kInsertTask);
  insert.Bind(1, task.task_id).Bind(2, task.tool).Bind(3, task.status_message);
  insert.Bind(4, task.created_ms).Bind(5, task.updated_ms);
  if (task.ttl_ms) {
    insert.Bind(6, *task.ttl_ms).Bind(7, task.created_ms + *task.ttl_ms);
  } else {
    insert.BindNull(6).BindNull(7);
  }
  insert.Bind(8, task.poll_interval_ms).Bind(9, Dump(task.request));
  BindOptionalText(insert, 10, task.idempotency_key);
  BindOptionalText(insert, 11, task.fingerprint);
  insert.Bind(12, task.owner).Bind(13, task.owner_pid).Bind(14, task.lease_until_ms);
  BindJson(insert, 15, task.input_answers);
  insert.Run();
}

// Runs one write statement in its own transaction. Returns the rows it changed.
template <typename Binder>
int64_t Write(Database& db, std::string_view sql, const Binder& bind) {
  WriteTransaction txn(db);
  int64_t changed = 0;
  {
    Statement stmt = db.Prepare(sql);
    bind(stmt);
    stmt.Run();
    changed = db.Changes();
  }
  txn.Commit();
  return changed;
}

}  // namespace

std::string_view TaskStatusName(TaskStatus status) {
  switch (status) {
    case TaskStatus::kWorking:
      return "working";
    case TaskStatus::kInputRequired:
      return "input_required";
    case TaskStatus::kCompleted:
      return "completed";
    case TaskStatus::kFailed:
      return "failed";
    case TaskStatus::kCancelled:
      return "cancelled";
  }
  return "working";
}

std::optional<TaskStatus> ParseTaskStatus(std::string_view name) {
  for (TaskStatus status : {TaskStatus::kWorking, TaskStatus::kInputRequired,
                            TaskStatus::kCompleted, TaskStatus::kFailed, TaskStatus::kCancelled}) {
    if (TaskStatusName(status) == name) return status;
  }
  return std::nullopt;
}

bool IsTerminal(TaskStatus status) {
  return status == TaskStatus::kCompleted || status == TaskStatus::kFailed ||
         status == TaskStatus::kCancelled;
}

std::string_view CancelPhaseName(CancelPhase phase) {
  switch (phase) {
    case CancelPhase::kNone:
      return "none";
    case CancelPhase::kRequested:
      return "requested";
    case CancelPhase::kObserved:
      return "observed";
    case CancelPhase::kFinishedAfterCancel:
      return "finished_after_cancel";
  }
  return "none";
}

TaskStore::Created TaskStore::Create(const TaskRecord& task, int64_t now_ms) {
  WriteTransaction txn(db_);
  Created out;
  if (!task.idempotency_key.empty()) {
    // Under the write lock, so two creators of one key cannot both miss the other.
    if (std::optional<TaskRecord> old = FindByKey(db_, task.tool, task.idempotency_key)) {
      if (!old->Expired(now_ms)) {
        out.outcome = old->fingerprint == task.fingerprint ? CreateOutcome::kExisting
                                                           : CreateOutcome::kKeyMismatch;
        out.task = *std::move(old);
        return out;  // nothing written; the transaction rolls back
      }
      // Invariant 3: an expired task gives its key up.
      Statement drop = db_.Prepare("DELETE FROM tasks WHERE seq = ?1");
      drop.Bind(1, old->seq).Run();
    }
  }
  Insert(db_, task);
  out.task = *FindById(db_, task.task_id);
  txn.Commit();
  return out;
}

std::optional<TaskRecord> TaskStore::Get(std::string_view task_id) {
  return FindById(db_, task_id);
}

TaskStore::Page TaskStore::List(int64_t after_seq, size_t limit, int64_t now_ms) {
  // One row past the page says whether another page follows.
  const auto fetch =
      static_cast<int64_t>(std::min<uint64_t>(limit, static_cast<uint64_t>(INT64_MAX) - 1)) + 1;
  Statement rows = db_.Prepare(SelectTasks(
      "WHERE seq > ?1 AND (expires_ms IS NULL OR expires_ms > ?2) ORDER BY seq LIMIT ?3"));
  rows.Bind(1, after_seq).Bind(2, now_ms).Bind(3, fetch);
  Page page;
  page.tasks = ReadAll(rows);
  if (page.tasks.size() > limit) {
    page.tasks.pop_back();
    page.next_after = page.tasks.empty() ? after_seq : page.tasks.back().seq;
  }
  return page;
}

bool TaskStore::Finish(std::string_view task_id, TaskStatus status, std::string_view message,
                       const Json& result, const Json& error, int64_t now_ms) {
  if (status != TaskStatus::kCompleted && status != TaskStatus::kFailed) {
    assert(false && "Finish() takes completed or failed; Cancel() cancels");
    return false;
  }
  return Write(db_,
               "UPDATE tasks SET status = ?2, status_message = ?3, result = ?4, error = ?5, "
               "updated_ms = ?6 "
               "WHERE task_id = ?1 AND status IN ('working', 'input_required')",
               [&](Statement& s) {
                 s.Bind(1, task_id).Bind(2, TaskStatusName(status)).Bind(3, message);
                 BindJson(s, 4, result);
                 BindJson(s, 5, error);
                 s.Bind(6, now_ms);
               }) == 1;
}

bool TaskStore::Cancel(std::string_view task_id, std::string_view message, int64_t now_ms) {
  return Write(db_,
               "UPDATE tasks SET status = 'cancelled', cancel_phase = 'requested', "
               "status_message = ?2, updated_ms = ?3 "
               "WHERE task_id = ?1 AND status IN ('working', 'input_required')",
               [&](Statement& s) { s.Bind(1, task_id).Bind(2, message).Bind(3, now_ms); }) == 1;
}

bool TaskStore::RecordAfterCancel(std::string_view task_id, CancelPhase phase,
                                  std::string_view message, const Json& late_outcome,
                                  int64_t now_ms) {
  if (phase != CancelPhase::kObserved && phase != CancelPhase::kFinishedAfterCancel) {
    assert(false && "RecordAfterCancel() takes observed or finished_after_cancel");
    return false;
  }
  // Only work that ran to its end has an outcome to keep.
  const Json kept = phase == CancelPhase::kFinishedAfterCancel ? late_outcome : Json(nullptr);
  // Only from requested: the work ends once, so its late outcome is written once.
  return Write(db_,
               "UPDATE tasks SET cancel_phase = ?2, status_message = ?3, late_outcome = ?4, "
               "updated_ms = ?5 "
               "WHERE task_id = ?1 AND status = 'cancelled' AND cancel_phase = 'requested'",
               [&](Statement& s) {
                 s.Bind(1, task_id).Bind(2, CancelPhaseName(phase)).Bind(3, message);
                 BindJson(s, 4, kept);
                 s.Bind(5, now_ms);
               }) == 1;
}

bool TaskStore::Park(std::string_view task_id, const Json& input_requests, const Json& answers,
                     int64_t now_ms) {
  return Write(db_,
               "UPDATE tasks SET status = 'input_required', input_requests = ?2, "
               "input_answers = ?3, updated_ms = ?4 "
               "WHERE task_id = ?1 AND status = 'working'",
               [&](Statement& s) {
                 s.Bind(1, task_id);
                 BindJson(s, 2, input_requests);
                 BindJson(s, 3, answers);
                 s.Bind(4, now_ms);
               }) == 1;
}

TaskStore::Answered TaskStore::AnswerInput(std::string_view task_id, const Json& responses,
                                           const InputOwner& resumer, int64_t now_ms) {
  WriteTransaction txn(db_);
  Answered out;
  out.task = FindById(db_, task_id);
  if (!out.task || out.task->status != TaskStatus::kInputRequired || out.task->Expired(now_ms)) {
    return out;  // kNotWaiting; nothing written
  }
  TaskRecord& task = *out.task;
  Json requests = task.input_requests.is_object() ? task.input_requests : Json::object();
  Json answers = task.input_answers.is_object() ? task.input_answers : Json::object();
  bool any = false;
  for (const auto& [key, value] : responses.items()) {
    if (!requests.contains(key)) continue;  // not outstanding: ignored (the extension says so)
    answers[key] = value;
    requests.erase(key);
    any = true;
  }
  if (!any) {  // no outstanding key answered: still waiting, unchanged
    out.outcome = AnswerOutcome::kStillWaiting;
    return out;
  }
  if (Dump(answers).size() > resumer.max_answer_bytes) {
    out.outcome = AnswerOutcome::kTooLarge;
    return out;
  }
  const bool resume = requests.empty();
  Statement update = db_.Prepare(
      resume ? "UPDATE tasks SET status = 'working', input_requests = NULL, input_answers = ?2, "
               "updated_ms = ?3, owner = ?4, owner_pid = ?5, lease_until_ms = ?6 "
               "WHERE task_id = ?1"
             : "UPDATE tasks SET input_requests = ?4, input_answers = ?2, updated_ms = ?3 "
               "WHERE task_id = ?1");
  update.Bind(1, task_id);
  BindJson(update, 2, answers);
  update.Bind(3, now_ms);
  if (resume) {
    update.Bind(4, resumer.owner).Bind(5, resumer.pid).Bind(6, resumer.lease_until_ms);
  } else {
    BindJson(update, 4, requests);
  }
  update.Run();
  out.task = FindById(db_, task_id);
  txn.Commit();
  out.outcome = resume ? AnswerOutcome::kResumed : AnswerOutcome::kStillWaiting;
  return out;
}

size_t TaskStore::RenewLeases(std::string_view owner, int64_t lease_until_ms) {
  return static_cast<size_t>(
      Write(db_,
            "UPDATE tasks SET lease_until_ms = ?2 "
            "WHERE owner = ?1 AND status IN ('working', 'input_required')",
            [&](Statement& s) { s.Bind(1, owner).Bind(2, lease_until_ms); }));
}

bool TaskStore::TakeOver(std::string_view task_id, std::string_view from_owner,
                         std::string_view to_owner, int64_t to_pid) {
  return Write(db_,
               "UPDATE tasks SET owner = ?3, owner_pid = ?4 "
               "WHERE task_id = ?1 AND owner = ?2 AND status = 'working'",
               [&](Statement& s) {
                 s.Bind(1, task_id).Bind(2, from_owner).Bind(3, to_owner).Bind(4, to_pid);
               }) == 1;
}

std::vector<std::string> TaskStore::CancelRequestedOf(std::string_view owner) {
  Statement rows = db_.Prepare(
      "SELECT task_id FROM tasks WHERE owner = ?1 AND cancel_phase = 'requested' "
      "AND status = 'cancelled'");
  rows.Bind(1, owner);
  std::vector<std::string> ids;
  while (rows.Step()) ids.push_back(rows.Text(0));
  return ids;
}

std::vector<TaskRecord> TaskStore::Unfinished(std::string_view except_owner) {
  // `+seq`: read the few unfinished rows through their partial index and sort them, rather
  // than walk the whole table (finished tasks included) in seq order.
  Statement rows = db_.Prepare(
      SelectTasks("WHERE status IN ('working', 'input_required') AND owner <> ?1 ORDER BY +seq"));
  rows.Bind(1, except_owner);
  return ReadAll(rows);
}

size_t TaskStore::SweepExpired(int64_t now_ms) {
  return static_cast<size_t>(Write(db_, "DELETE FROM tasks WHERE expires_ms <= ?1",
                                   [&](Statement& s) { s.Bind(1, now_ms); }));
}

}  // namespace keel
