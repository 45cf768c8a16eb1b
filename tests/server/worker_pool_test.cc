// WorkerPool: inline mode for deterministic tests; threads run every job once; WaitIdle
// reports a job that does not finish. Latches, not sleeps, hold jobs in place.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "server/cancellation.h"
#include "server/worker_pool.h"

namespace keel {
namespace {

TEST_CASE("a pool of zero threads runs each job inline, inside Submit", "[pool]") {
  WorkerPool pool(0);
  int ran = 0;
  pool.Submit([&] { ++ran; });
  CHECK(ran == 1);
  CHECK(pool.pending() == 0);
}

TEST_CASE("every submitted job runs exactly once", "[pool]") {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(2);
    for (int i = 0; i < 1000; ++i) pool.Submit([&] { ran.fetch_add(1); });
    CHECK(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  }
  CHECK(ran.load() == 1000);
}

TEST_CASE("WaitIdle reports a job still running at the deadline", "[pool]") {
  WorkerPool pool(1);
  CancellationToken release;
  pool.Submit([release] { release.WaitUntil(TimePoint::max()); });
  CHECK_FALSE(pool.WaitIdle(std::chrono::steady_clock::now()));
  CHECK(pool.pending() == 1);
  release.Cancel();
  CHECK(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
}

TEST_CASE("a burst handed over with SubmitAll runs once per job, in order on one worker",
          "[pool]") {
  std::vector<int> order;  // one worker: the jobs never run concurrently
  {
    WorkerPool pool(1);
    std::vector<WorkerPool::Job> jobs;
    for (int i = 0; i < 100; ++i) jobs.push_back([&order, i] { order.push_back(i); });
    pool.SubmitAll(jobs);
    CHECK(jobs.empty());
    REQUIRE(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  }
  REQUIRE(order.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(order[static_cast<size_t>(i)] == i);
}

// Jobs that each wait until `count` of them run at once: they finish only if the pool
// gave every one of them its own worker.
struct Rendezvous {
  explicit Rendezvous(int count) : count(count) {}
  bool Arrive() {
    std::unique_lock<std::mutex> lock(mu);
    ++arrived;
    cv.notify_all();
    return cv.wait_until(lock, std::chrono::steady_clock::now() + std::chrono::seconds(30),
                         [this] { return arrived >= count; });
  }
  const int count;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
};

TEST_CASE("a burst with a job for every worker wakes every parked worker", "[pool]") {
  Rendezvous rendezvous(3);
  std::atomic<int> met{0};
  WorkerPool pool(3);
  std::vector<WorkerPool::Job> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back([&] { met += rendezvous.Arrive() ? 1 : 0; });
  pool.SubmitAll(jobs);
  REQUIRE(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(60)));
  CHECK(met.load() == 3);
}

TEST_CASE("a job queued while a worker is blocked starts on a parked worker", "[pool]") {
  WorkerPool pool(2);
  CancellationToken release;
  CancellationToken second_ran;  // cancelled = the second job has run
  pool.Submit([release] { release.WaitUntil(TimePoint::max()); });
  pool.Submit([second_ran]() mutable { second_ran.Cancel(); });
  const bool ran = second_ran.WaitUntil(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  release.Cancel();
  REQUIRE(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(60)));
  CHECK(ran);
}

TEST_CASE("a cancellation callback registered after the cancel runs at once") {
  CancellationToken token;
  token.Cancel();
  bool ran = false;
  auto registration = token.OnCancel([&] { ran = true; });
  CHECK(ran);
  CHECK(token.WaitUntil(TimePoint::max()));  // returns at once: already cancelled
}

TEST_CASE("a dropped registration never runs its callback") {
  CancellationToken token;
  bool ran = false;
  { auto registration = token.OnCancel([&] { ran = true; }); }
  token.Cancel();
  CHECK_FALSE(ran);
}

}  // namespace
}  // namespace keel
