#include "server/tools/fault_plan.h"

#include <charconv>

namespace keel {
namespace {

std::optional<int64_t> ParseCount(const std::string& text, int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0 || value > max) return std::nullopt;
  return value;
}

constexpr int64_t kMaxFaultMs = 3600LL * 1000;  // an hour: longer is a typo
constexpr int64_t kMaxFaultCount = 1000000;

}  // namespace

FaultPlan::FaultPlan(std::map<std::string, FaultSpec> specs, std::function<TimePoint()> now)
    : specs_(std::move(specs)), now_(std::move(now)) {
  if (!now_) now_ = [] { return std::chrono::steady_clock::now(); };
}

FaultAction FaultPlan::Next(const std::string& tool) {
  FaultAction action;
  const auto spec = specs_.find(tool);
  if (spec == specs_.end()) return action;
  const FaultSpec& f = spec->second;
  std::lock_guard<std::mutex> lock(mu_);
  State& state = state_[tool];
  const int call = ++state.calls - f.start_after;  // counted from the first faulty call
  if (call <= 0) return action;
  const TimePoint now = now_();
  if (!state.first_call) state.first_call = now;
  action.latency_ms = f.latency_ms;
  if (call <= f.fail_503) action.refuse_503 = true;
  if (f.sustained_503_ms && now - *state.first_call < Millis(*f.sustained_503_ms)) {
    action.refuse_503 = true;
  }
  if (!action.refuse_503 && call <= f.fail_503 + f.lose_response) {
    action.lose_response = call > f.fail_503;
  }
  return action;
}

std::string FaultPlan::Describe() const {
  std::string text;
  for (const auto& [name, f] : specs_) {
    // Not a capture of `name`: clang 14 (the sanitizer and fuzz builds) cannot capture a
    // structured binding.
    auto add = [&text, &tool = name](const std::string& item) {
      text += (text.empty() ? "" : ", ") + tool + ":" + item;
    };
    if (f.latency_ms > 0) add("latency=" + std::to_string(f.latency_ms));
    if (f.fail_503 > 0) add("fail_503=" + std::to_string(f.fail_503));
    if (f.sustained_503_ms) add("sustained_503=" + std::to_string(*f.sustained_503_ms));
    if (f.lose_response > 0) add("lose_response=" + std::to_string(f.lose_response));
    if (f.start_after > 0) add("start_after=" + std::to_string(f.start_after));
  }
  return text;
}

std::optional<std::map<std::string, FaultSpec>> ParseFaults(const std::vector<std::string>& values,
                                                            const std::set<std::string>& tools,
                                                            std::string* error) {
  std::map<std::string, FaultSpec> specs;
  for (const std::string& value : values) {
    auto fail = [&](const std::string& why) {
      *error = "--fault " + value + ": " + why;
      return std::nullopt;
    };
    const size_t colon = value.find(':');
    if (colon == std::string::npos) return fail("expected TOOL:KIND[=VALUE]");
    const std::string tool = value.substr(0, colon);
    if (tools.count(tool) == 0) {
      std::string known;
      for (const std::string& t : tools) known += (known.empty() ? "" : ", ") + t;
      return fail("no simulated backend tool '" + tool + "' (faults apply to: " + known + ")");
    }
    const std::string rest = value.substr(colon + 1);
    const size_t eq = rest.find('=');
    const std::string kind = rest.substr(0, eq);
    const std::optional<std::string> arg =
        eq == std::string::npos ? std::nullopt : std::optional<std::string>(rest.substr(eq + 1));
    FaultSpec& spec = specs[tool];
    auto number = [&](int64_t max) -> std::optional<int64_t> {
      return arg ? ParseCount(*arg, max) : std::nullopt;
    };
    if (kind == "latency" || kind == "slow") {
      const auto ms = number(kMaxFaultMs);
      if (!ms) return fail(kind + " needs milliseconds, 0.." + std::to_string(kMaxFaultMs));
      spec.latency_ms = *ms;
    } else if (kind == "fail_503") {
      const auto n = number(kMaxFaultCount);
      if (!n) return fail("fail_503 needs a count of calls");
      spec.fail_503 = static_cast<int>(*n);
    } else if (kind == "sustained_503") {
      const auto ms = number(kMaxFaultMs);
      if (!ms) return fail("sustained_503 needs milliseconds, 0.." + std::to_string(kMaxFaultMs));
      spec.sustained_503_ms = *ms;
    } else if (kind == "lose_response") {
      const auto n = arg ? number(kMaxFaultCount) : std::optional<int64_t>(1);
      if (!n) return fail("lose_response takes a count of calls (default 1)");
      spec.lose_response = static_cast<int>(*n);
    } else if (kind == "start_after") {
      const auto n = number(kMaxFaultCount);
      if (!n) return fail("start_after needs a count of calls");
      spec.start_after = static_cast<int>(*n);
    } else {
      return fail("unknown kind '" + kind +
                  "' (known: latency=MS, slow=MS, fail_503=N, sustained_503=MS, "
                  "lose_response[=N], start_after=N)");
    }
  }
  return specs;
}

}  // namespace keel
