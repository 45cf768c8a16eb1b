// Jobs that suspend (suspend.h, job_fiber.h): a WorkerPool job gives its thread back while
// it waits and continues once, on a worker, when its Resume is called — from another thread
// or inside the arm itself. A suspended job keeps its slot. Outside a pool job, and in an
// inline pool, nothing can suspend. Latches and blocked-thread checks, not sleeps, order
// each side.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/blocked_thread.h"
#include "server/runtime/suspend.h"
#include "server/runtime/worker_pool.h"

namespace keel::job_suspend_test {
namespace {

TimePoint Generous() { return std::chrono::steady_clock::now() + std::chrono::seconds(30); }

// Resumes kept by arms, to be called by the test.
class Parked {
 public:
  SuspendArm Arm() {
    return [this](ResumeFn resume) {
      std::lock_guard<std::mutex> lock(mu_);
      resumes_.push_back(std::move(resume));
      cv_.notify_all();
    };
  }
  // Waits until `n` resumes are kept; false on the deadline.
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_until(lock, Generous(), [&] { return resumes_.size() >= n; });
  }
  std::vector<ResumeFn> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(resumes_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ResumeFn> resumes_;
};

}  // namespace

TEST_CASE("nothing can suspend outside a pool job or in an inline pool", "[pool][fiber]") {
  CHECK_FALSE(CanSuspend());
  WorkerPool inline_pool(0);
  bool inside = true;
  inline_pool.Submit([&] { inside = CanSuspend(); });
  CHECK_FALSE(inside);

  WorkerPool pool(1);
  std::atomic<bool> on_worker{false};
  pool.Submit([&] { on_worker = CanSuspend(); });
  REQUIRE(pool.WaitIdle(Generous()));
  CHECK(on_worker.load());
}

TEST_CASE("a suspended job waits, counted as pending, until another thread resumes it",
          "[pool][fiber]") {
  WorkerPool pool(1);
  Parked parked;
  std::atomic<int> stage{0};
  pool.Submit([&] {
    stage = 1;
    Suspend(parked.Arm());
    stage = 2;
  });
  REQUIRE(parked.WaitFor(1));
  CHECK(stage.load() == 1);
  CHECK(pool.pending() == 1);
  CHECK(pool.suspended() == 1);
  CHECK_FALSE(pool.WaitIdle(std::chrono::steady_clock::now()));

  std::thread resumer([&] { parked.Take()[0](); });
  resumer.join();
  REQUIRE(pool.WaitIdle(Generous()));
  CHECK(stage.load() == 2);
  CHECK(pool.suspended() == 0);
}

TEST_CASE("a Resume called inside the arm continues the job at once", "[pool][fiber]") {
  WorkerPool pool(1);
  std::atomic<int> rounds{0};
  pool.Submit([&] {
    for (int i = 0; i < 3; ++i) {
      Suspend([](ResumeFn resume) { resume(); });
      ++rounds;
    }
  });
  REQUIRE(pool.WaitIdle(Generous()));
  CHECK(rounds.load() == 3);
}

TEST_CASE("a suspended job keeps its slot: the next job starts once it has finished",
          "[pool][fiber]") {
  WorkerPool pool(1);
  Parked parked;
  std::atomic<pid_t> worker{0};
  std::atomic<bool> first_done{false};
  std::atomic<bool> second_saw_first_done{false};
  pool.Submit([&] {
    worker = CurrentThreadId();
    Suspend(parked.Arm());
    first_done = true;
  });
  REQUIRE(parked.WaitFor(1));
  pool.Submit([&] { second_saw_first_done = first_done.load(); });
  // The only worker parks with the second job queued: the slot is the suspended job's.
  REQUIRE(WaitUntilAsleep(worker.load()));
  CHECK(pool.pending() == 2);
  parked.Take()[0]();
  REQUIRE(pool.WaitIdle(Generous()));
  CHECK(second_saw_first_done.load());
}

TEST_CASE(
    "a Resume wakes a parked worker while the only awake one runs a long job, and the "
    "job queued behind starts once the resumed one has finished",
    "[pool][fiber]") {
  WorkerPool pool(2);
  Parked parked;
  std::latch hold_started(1);
  std::latch release_hold(1);
  std::latch resumed_ran(1);
  std::latch queued_ran(1);
  std::atomic<bool> resumed_done{false};
  std::atomic<bool> queued_saw_resumed_done{false};
  pool.Submit([&] {  // keeps one worker inside a job's code
    hold_started.count_down();
    release_hold.wait();
  });
  hold_started.wait();
  pool.Submit([&] {
    Suspend(parked.Arm());
    resumed_done = true;
    resumed_ran.count_down();
  });
  REQUIRE(parked.WaitFor(1));
  pool.Submit([&] {  // no free slot: both are taken
    queued_saw_resumed_done = resumed_done.load();
    queued_ran.count_down();
  });
  parked.Take()[0]();
  resumed_ran.wait();
  queued_ran.wait();
  CHECK(queued_saw_resumed_done.load());
  CHECK_FALSE(pool.WaitIdle(std::chrono::steady_clock::now()));  // the long job still runs
  release_hold.count_down();
  REQUIRE(pool.WaitIdle(Generous()));
}

TEST_CASE("many jobs suspended and resumed from other threads in any order each finish once",
          "[pool][fiber]") {
  constexpr int kJobs = 400;
  WorkerPool pool(8);
  Parked parked;
  std::atomic<int> finished{0};
  std::vector<std::atomic<int>> runs(kJobs);
  for (int i = 0; i < kJobs; ++i) {
    pool.Submit([&, i] {
      Suspend(parked.Arm());
      runs[i].fetch_add(1);
      finished.fetch_add(1);
    });
  }
  // Eight slots: resume in batches as the jobs suspend, from two threads, shuffled.
  std::mt19937 random(7);
  int resumed = 0;
  while (resumed < kJobs) {
    REQUIRE(parked.WaitFor(1));
    std::vector<ResumeFn> batch = parked.Take();
    std::shuffle(batch.begin(), batch.end(), random);
    const size_t half = batch.size() / 2;
    std::thread a([&] {
      for (size_t k = 0; k < half; ++k) batch[k]();
    });
    std::thread b([&] {
      for (size_t k = half; k < batch.size(); ++k) batch[k]();
    });
    a.join();
    b.join();
    resumed += static_cast<int>(batch.size());
  }
  REQUIRE(pool.WaitIdle(Generous()));
  CHECK(finished.load() == kJobs);
  for (int i = 0; i < kJobs; ++i) CHECK(runs[i].load() == 1);
}

}  // namespace keel::job_suspend_test
