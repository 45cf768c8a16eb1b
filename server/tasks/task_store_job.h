// TaskManager::Store: runs one job on the TaskStoreThread and its continuation back on the
// loop. Private to TaskManager's own .cc files (task_manager.cc, task_creation.cc,
// task_methods.cc, task_lifecycle.cc, task_input.cc), which all post store jobs; nothing
// else includes it.
//
// Thread: Store is called on the loop; `work` runs on the store thread; `done` on the loop.
// Invariants:
//  1. Every job posted counts in jobs_in_flight_ until its `done` has run (idle() and the
//     shutdown wait rely on it).
//  2. An exception from `work` (a SqliteError) never crosses to the loop as one: `done`
//     gets a default value and the error text (never empty).
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <utility>

#include "server/tasks/task_manager.h"

namespace keel {

template <typename T>
void TaskManager::Store(std::function<T(TaskStore&)> work,
                        std::function<void(T, std::string error)> done) {
  ++jobs_in_flight_;
  // The job refers to the loop only: it may run after this manager is gone (at exit the
  // store thread drains), and then its posted answer is simply never run.
  store_.Post([&loop = loop_, this, work = std::move(work),
               done = std::move(done)](TaskStore& store) mutable {
    T value{};
    std::string error;
    try {
      value = work(store);
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "unknown SQLite error";
    }
    loop.Post([this, value = std::move(value), error = std::move(error),
               done = std::move(done)]() mutable {
      done(std::move(value), std::move(error));
      JobDone();
    });
  });
}

}  // namespace keel
