#include "server/policy/circuit_breaker.h"

#include <algorithm>
#include <limits>

namespace keel {
namespace {

int64_t CeilMs(Duration d) { return std::chrono::ceil<Millis>(d).count(); }

}  // namespace

std::string_view BreakerStateName(BreakerState state) {
  switch (state) {
    case BreakerState::kClosed:
      return "closed";
    case BreakerState::kOpen:
      return "open";
    case BreakerState::kHalfOpen:
      return "half_open";
    case BreakerState::kForcedOpen:
      return "forced_open";
    case BreakerState::kDisabled:
      return "disabled";
    case BreakerState::kMetricsOnly:
      return "metrics_only";
  }
  return "closed";
}

std::string_view BreakerTripName(BreakerTrip trip) {
  switch (trip) {
    case BreakerTrip::kNone:
      return "none";
    case BreakerTrip::kFailureRate:
      return "failure_rate";
    case BreakerTrip::kSlowRate:
      return "slow_rate";
    case BreakerTrip::kProbeFailed:
      return "probe_failed";
    case BreakerTrip::kProbeSlow:
      return "probe_slow";
    case BreakerTrip::kProbeTimeout:
      return "probe_timeout";
    case BreakerTrip::kHalfOpenMaxWait:
      return "half_open_max_wait";
  }
  return "none";
}

int64_t BreakerOpenMs(const BreakerSettings& settings, int trip) {
  const int64_t cap = settings.max_open_ms;
  int64_t ms = settings.open_ms;
  // Doubling stops at the cap, so neither a long run of trips nor a huge cap overflows.
  for (int k = 1; k < trip && ms < cap; ++k) ms = ms > cap / 2 ? cap : ms * 2;
  return std::min(ms, cap);
}

CircuitBreaker::CircuitBreaker(const BreakerSettings& settings, const Clock& clock)
    : settings_(settings), clock_(clock), window_(settings.window_ms) {}

BreakerPermit CircuitBreaker::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  BreakerPermit permit;
  permit.generation = generation_;
  permit.state = Reported();
  if (settings_.mode == BreakerMode::kDisabled) {
    permit.admitted = true;
    return permit;
  }
  if (settings_.mode == BreakerMode::kForcedOpen) {
    ++rejected_;
    return permit;
  }

  const TimePoint now = clock_.Now();
  ApplyDeadlines(now);
  if (circuit_ == BreakerState::kOpen && now >= open_until_) EnterHalfOpen(now);
  permit.generation = generation_;
  permit.circuit = circuit_;
  switch (circuit_) {
    case BreakerState::kClosed:
      permit.admitted = true;
      break;
    case BreakerState::kOpen:
      permit.retry_after_ms = CeilMs(open_until_ - now);
      break;
    case BreakerState::kHalfOpen:
      if (in_flight_) {
        permit.retry_after_ms = 0;
      } else {
        permit.admitted = true;
        permit.probe = true;
        permit.probe_id = ++last_probe_id_;
        in_flight_ = Probe{permit.probe_id, generation_, now};
      }
      break;
    default:
      break;
  }

  if (settings_.mode == BreakerMode::kMetricsOnly) {
    permit.state = BreakerState::kMetricsOnly;
    if (!permit.admitted) {
      permit.admitted = true;
      permit.would_reject = true;
      ++would_have_rejected_;
    }
  } else {
    permit.state = circuit_;
    if (!permit.admitted) ++rejected_;
  }
  return permit;
}

void CircuitBreaker::Record(const BreakerPermit& permit, BreakerOutcome outcome, Duration elapsed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!permit.admitted || settings_.mode == BreakerMode::kDisabled ||
      settings_.mode == BreakerMode::kForcedOpen) {
    return;
  }
  const TimePoint now = clock_.Now();
  ApplyDeadlines(now);

  // The probe's turn ends with its answer, whatever its generation (invariant 2).
  bool was_in_flight = false;
  if (permit.probe && in_flight_ && in_flight_->id == permit.probe_id) {
    in_flight_.reset();
    was_in_flight = true;
  }
  if (permit.would_reject) return;  // a normal breaker would never have run it
  if (permit.generation != generation_) {
    ++late_results_;
    return;
  }
  if (outcome == BreakerOutcome::kIgnored) {
    ++ignored_results_;
    return;
  }
  if (outcome == BreakerOutcome::kThrottled) {
    ++throttled_results_;
    if (circuit_ == BreakerState::kClosed) window_.Add(now, BreakerCounts{.throttled = 1});
    return;
  }

  // resilience4j's rule: slow means strictly longer than the threshold.
  const bool slow = elapsed > Millis(settings_.slow_call_ms);
  if (circuit_ == BreakerState::kClosed) {
    RecordClosed(now, outcome, slow);
  } else if (circuit_ == BreakerState::kHalfOpen && was_in_flight) {
    RecordProbe(now, outcome, slow);
  }
  // Else a second Record() of a probe: its turn is over, and it changes nothing.
}

void CircuitBreaker::RecordClosed(TimePoint now, BreakerOutcome outcome, bool slow) {
  const BreakerCounts counts =
      window_.Add(now, BreakerCounts{.calls = 1,
                                     .failures = outcome == BreakerOutcome::kFailure ? 1 : 0,
                                     .slow = slow ? 1 : 0});
  if (counts.calls < settings_.minimum_calls) return;
  // In integers, so "at or above 50 %" is exact: 10 failures of 20 opens.
  if (counts.failures * 100 >= settings_.failure_rate_percent * counts.calls) {
    Trip(now, BreakerTrip::kFailureRate);
  } else if (counts.slow * 100 >= settings_.slow_rate_percent * counts.calls) {
    Trip(now, BreakerTrip::kSlowRate);
  }
}

void CircuitBreaker::RecordProbe(TimePoint now, BreakerOutcome outcome, bool slow) {
  if (outcome == BreakerOutcome::kFailure) {
    Trip(now, BreakerTrip::kProbeFailed);
  } else if (slow) {
    Trip(now, BreakerTrip::kProbeSlow);
  } else if (++half_open_successes_ >= settings_.half_open_probes) {
    Close();
  }
}

void CircuitBreaker::ApplyDeadlines(TimePoint now) {
  // Earliest deadline first, each as of when it was due; at most three rounds.
  for (;;) {
    std::optional<TimePoint> probe_due;
    std::optional<TimePoint> wait_due;
    if (in_flight_) probe_due = in_flight_->admitted_at + Millis(settings_.probe_timeout_ms);
    if (circuit_ == BreakerState::kHalfOpen) {
      wait_due = half_open_since_ + Millis(settings_.half_open_max_wait_ms);
    }
    if (probe_due && *probe_due <= now && (!wait_due || *probe_due <= *wait_due)) {
      const bool current =
          circuit_ == BreakerState::kHalfOpen && in_flight_->generation == generation_;
      in_flight_.reset();
      if (current) Trip(*probe_due, BreakerTrip::kProbeTimeout);
    } else if (wait_due && *wait_due <= now) {
      Trip(*wait_due, BreakerTrip::kHalfOpenMaxWait);
    } else {
      return;
    }
  }
}

void CircuitBreaker::Trip(TimePoint at, BreakerTrip why) {
  if (consecutive_trips_ < std::numeric_limits<int>::max()) ++consecutive_trips_;
  open_ms_ = BreakerOpenMs(settings_, consecutive_trips_);
  open_until_ = at + Millis(open_ms_);
  circuit_ = BreakerState::kOpen;
  ++generation_;
  last_trip_ = why;
  half_open_successes_ = 0;
}

void CircuitBreaker::EnterHalfOpen(TimePoint now) {
  circuit_ = BreakerState::kHalfOpen;
  ++generation_;
  half_open_since_ = now;
  half_open_successes_ = 0;
}

void CircuitBreaker::Close() {
  circuit_ = BreakerState::kClosed;
  ++generation_;
  consecutive_trips_ = 0;
  half_open_successes_ = 0;
  window_.Clear();
}

BreakerState CircuitBreaker::Reported() const {
  switch (settings_.mode) {
    case BreakerMode::kNormal:
      return circuit_;
    case BreakerMode::kForcedOpen:
      return BreakerState::kForcedOpen;
    case BreakerMode::kDisabled:
      return BreakerState::kDisabled;
    case BreakerMode::kMetricsOnly:
      return BreakerState::kMetricsOnly;
  }
  return circuit_;
}

BreakerSnapshot CircuitBreaker::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  BreakerSnapshot s;
  s.state = Reported();
  s.circuit = circuit_;
  s.mode = settings_.mode;
  s.generation = generation_;
  s.window = window_.CountsAt(clock_.Now());
  if (s.window.calls > 0) {
    s.failure_rate_percent = 100.0 * s.window.failures / s.window.calls;
    s.slow_rate_percent = 100.0 * s.window.slow / s.window.calls;
  }
  s.consecutive_trips = consecutive_trips_;
  s.open_ms = open_ms_;
  s.open_until = open_until_;
  s.half_open_successes = half_open_successes_;
  s.probe_in_flight = in_flight_.has_value();
  s.last_trip = last_trip_;
  s.rejected = rejected_;
  s.would_have_rejected = would_have_rejected_;
  s.late_results = late_results_;
  s.ignored_results = ignored_results_;
  s.throttled_results = throttled_results_;
  return s;
}

}  // namespace keel
