#include "server/runtime/job_fiber.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

// The sanitizers follow a switch of stacks only when told (scripts/sanitize runs every test
// with them): ASan, to know which stack is live; TSan, to see a fiber's job as one thread of
// execution that moves between threads, with the switch as the synchronisation it is.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEEL_FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define KEEL_FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KEEL_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define KEEL_FIBER_TSAN 1
#endif
#if defined(KEEL_FIBER_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(KEEL_FIBER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace keel {
namespace {

namespace bc = boost::context;

#if defined(KEEL_FIBER_ASAN) || defined(KEEL_FIBER_TSAN)
constexpr size_t kStackBytes = size_t{4} << 20;  // the sanitizers' frames are several times larger
#else
constexpr size_t kStackBytes = size_t{1} << 20;  // JSON nests at most 128 deep (bounded_json.h)
#endif
// Stacks kept for reuse: enough for every job in flight on a busy server; past that a
// finished job's stack is unmapped.
constexpr size_t kCachedStacks = 64;

class StackCache {
 public:
  bc::stack_context Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        bc::stack_context stack = free_.back();
        free_.pop_back();
        return stack;
      }
    }
    return bc::protected_fixedsize_stack(kStackBytes).allocate();
  }
  void Give(bc::stack_context stack) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.size() < kCachedStacks) {
        free_.push_back(stack);
        return;
      }
    }
    bc::protected_fixedsize_stack(kStackBytes).deallocate(stack);
  }

 private:
  std::mutex mu_;
  std::vector<bc::stack_context> free_;
};

// Never destroyed: a fiber may finish while the process exits.
StackCache& Stacks() {
  static StackCache* cache = new StackCache();
  return *cache;
}

// Boost.Context's StackAllocator concept, over the cache; `*taken` learns the stack.
struct CachedStack {
  bc::stack_context* taken;
  bc::stack_context allocate() {
    *taken = Stacks().Take();
    return *taken;
  }
  void deallocate(bc::stack_context& stack) { Stacks().Give(stack); }
};

thread_local JobFiber* current = nullptr;

}  // namespace

struct JobFiber::State {
  std::function<void()> job;
  bc::fiber fiber;   // the job's context while it is switched out
  bc::fiber worker;  // the worker's context while the job runs
  bool finished = false;
  std::atomic<bool> resumed{true};
  bc::stack_context stack;  // the job's stack (for the sanitizers)
#if defined(KEEL_FIBER_ASAN)
  void* fake_stack = nullptr;  // ASan's for the job's stack while it is switched out
  const void* worker_bottom = nullptr;
  size_t worker_size = 0;
#endif
#if defined(KEEL_FIBER_TSAN)
  void* tsan_fiber = __tsan_create_fiber(0);
  void* tsan_worker = nullptr;
#endif
  // Called on the job's stack just before it switches to the worker; `last` when the job
  // has finished and its stack is about to go.
  void LeaveJob(bool last) {
#if defined(KEEL_FIBER_ASAN)
    __sanitizer_start_switch_fiber(last ? nullptr : &fake_stack, worker_bottom, worker_size);
#endif
#if defined(KEEL_FIBER_TSAN)
    __tsan_switch_to_fiber(tsan_worker, 0);
#endif
    (void)last;
  }
  // Called on the job's stack once it runs again, from any worker.
  void EnterJob() {
#if defined(KEEL_FIBER_ASAN)
    __sanitizer_finish_switch_fiber(fake_stack, &worker_bottom, &worker_size);
#endif
  }
};

JobFiber::JobFiber(std::function<void()> job) : state_(std::make_unique<State>()) {
  state_->job = std::move(job);
  State* state = state_.get();
  state_->fiber =
      bc::fiber(std::allocator_arg, CachedStack{&state_->stack}, [state](bc::fiber&& worker) {
        state->EnterJob();
        state->worker = std::move(worker);
        state->job();
        state->job = nullptr;  // its captures are released here, on the job's stack
        state->finished = true;
        state->LeaveJob(/*last=*/true);
        return std::move(state->worker);
      });
}

JobFiber::~JobFiber() {
#if defined(KEEL_FIBER_TSAN)
  __tsan_destroy_fiber(state_->tsan_fiber);
#endif
}

bool JobFiber::Run() {
  JobFiber* const outer = current;
  current = this;
  arm_ = nullptr;
#if defined(KEEL_FIBER_ASAN)
  void* worker_fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&worker_fake_stack,
                                 static_cast<char*>(state_->stack.sp) - state_->stack.size,
                                 state_->stack.size);
#endif
#if defined(KEEL_FIBER_TSAN)
  state_->tsan_worker = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(state_->tsan_fiber, 0);
#endif
  state_->fiber = std::move(state_->fiber).resume();
#if defined(KEEL_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(worker_fake_stack, nullptr, nullptr);
#endif
  current = outer;
  return state_->finished;
}

bool JobFiber::MarkResumed() { return !state_->resumed.exchange(true); }

bool CanSuspend() { return current != nullptr; }

const void* CurrentJob() {
  thread_local const char thread_marker = 0;
  if (current != nullptr) return current;
  return &thread_marker;
}

void Suspend(const SuspendArm& arm) {
  JobFiber* const self = current;
  if (self == nullptr) {
    std::fputs("keel: Suspend() outside a pool fiber\n", stderr);
    std::abort();
  }
  self->arm_ = &arm;
  self->state_->resumed.store(false);
  // Back to Run() on the worker; this returns when some worker runs the fiber again, with
  // that worker's context. Nothing read from thread-local storage before this line is used
  // after it.
  self->state_->LeaveJob(/*last=*/false);
  self->state_->worker = std::move(self->state_->worker).resume();
  self->state_->EnterJob();
}

}  // namespace keel
