#include "server/tasks/task_store_thread.h"

#include <spdlog/spdlog.h>

namespace keel {

std::unique_ptr<TaskStoreThread> TaskStoreThread::Start(const std::string& path,
                                                        std::string* error) {
  error->clear();
  // Opened here so a failure is reported at once; from then on only the store thread uses
  // the connection (it is handed over, never shared).
  std::unique_ptr<Database> db = Database::Open(path, error);
  if (db == nullptr) return nullptr;
  std::unique_ptr<TaskStoreThread> self(new TaskStoreThread());
  self->thread_ =
      std::thread([raw = self.get(), db = std::move(db)]() mutable { raw->Loop(std::move(db)); });
  return self;
}

TaskStoreThread::~TaskStoreThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void TaskStoreThread::Post(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void TaskStoreThread::Loop(std::unique_ptr<Database> db) {
  db->SetBusyTimeout(std::chrono::milliseconds(5000));
  TaskStore store(*db);
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and every posted job has run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job(store);
    } catch (const std::exception& e) {
      spdlog::error("task store: a job failed: {}", e.what());
    }
  }
}

}  // namespace keel
