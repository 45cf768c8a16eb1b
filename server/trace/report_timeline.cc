#include "server/trace/report_timeline.h"

#include <algorithm>
#include <map>

#include "server/trace/html_text.h"

namespace keel {
namespace {

constexpr double kWidth = 1200;      // the drawing's width in px (the page scrolls wider)
constexpr double kLabelWidth = 260;  // the call's name column
constexpr double kRowHeight = 22;
constexpr double kTop = 22;            // room for the axis labels
constexpr size_t kLabelBytes = 30;     // a tool name longer than this is clipped in the label
constexpr size_t kTooltipBytes = 300;  // and in a tooltip

std::string SvgAttr(const std::string& name, const std::string& value) {
  return " " + name + "=\"" + HtmlEscape(value) + "\"";
}

std::string SvgTitle(const std::string& text) {
  return "<title>" + HtmlEscape(Clip(text, kTooltipBytes)) + "</title>";
}

std::string SvgNum(double value) { return Fixed(value, 1); }

std::string SvgRect(const char* cls, double x, double y, double width, double height) {
  return std::string("<rect class=\"") + cls + "\" x=\"" + SvgNum(x) + "\" y=\"" + SvgNum(y) +
         "\" width=\"" + SvgNum(width) + "\" height=\"" + SvgNum(height) + "\"";
}

int64_t CallEndMs(const TraceCall& call) { return call.end_ms >= 0 ? call.end_ms : call.last_ms; }

std::string AttemptSvg(const TraceCall& call, const TraceAttempt& attempt, const TimeAxis& axis) {
  const int64_t start = attempt.start_ms >= 0 ? attempt.start_ms : call.start_ms;
  double end = static_cast<double>(CallEndMs(call));
  if (attempt.end_ms >= 0) {
    end = static_cast<double>(attempt.end_ms);
  } else if (attempt.duration_ms >= 0) {
    end = static_cast<double>(start) + attempt.duration_ms;
  }
  const double x = axis.X(static_cast<double>(start));
  const double width = std::max(2.0, axis.X(end) - x);
  const std::string outcome = attempt.outcome.empty() ? "unfinished" : attempt.outcome;
  std::string tip = "attempt " + std::to_string(attempt.number) + ": " + outcome;
  if (!attempt.error_type.empty()) tip += " (" + attempt.error_type + ")";
  if (attempt.duration_ms >= 0) tip += ", " + HumanMs(attempt.duration_ms);
  if (!attempt.circuit_state.empty()) tip += ", breaker " + attempt.circuit_state;
  if (attempt.probe) tip += " (half-open probe)";
  return SvgRect("attempt", x, 5, width, 12) +
         SvgAttr("data-attempt", std::to_string(attempt.number)) +
         SvgAttr("data-outcome", outcome) +
         (attempt.error_type.empty() ? "" : SvgAttr("data-error", attempt.error_type)) + ">" +
         SvgTitle(tip) + "</rect>";
}

std::string MarkSvg(const TraceMark& mark, const TimeAxis& axis) {
  const double x = axis.X(static_cast<double>(mark.at_ms));
  const std::string at = SvgNum(x);
  switch (mark.kind) {
    case MarkKind::kBackoff: {
      const std::string end = SvgNum(std::max(x + 2, axis.X(mark.at_ms + mark.length_ms)));
      return "<line class=\"backoff\" x1=\"" + at + "\" x2=\"" + end + "\" y1=\"11\" y2=\"11\">" +
             SvgTitle("backoff " + HumanMs(mark.length_ms) + " before the next attempt" +
                      (mark.detail.empty() ? "" : " (after " + mark.detail + ")")) +
             "</line>";
    }
    case MarkKind::kTimeout:
      return "<g class=\"timeout\"" + SvgAttr("data-layer", mark.detail) + "><path d=\"M" +
             SvgNum(x - 5) + " 0L" + SvgNum(x + 5) + " 0L" + at + " 9Z\"/><text x=\"" +
             SvgNum(x + 6) + "\" y=\"8\">" + HtmlEscape(Clip(mark.detail, 12)) + "</text>" +
             SvgTitle("timeout fired: " + mark.detail + " layer") + "</g>";
    case MarkKind::kCancel:
      return "<g class=\"cancel\"><path d=\"M" + SvgNum(x - 4) + " 7L" + SvgNum(x + 4) + " 15M" +
             SvgNum(x - 4) + " 15L" + SvgNum(x + 4) + " 7\"/>" +
             SvgTitle("cancel received from the client") + "</g>";
    case MarkKind::kReplay:
      return "<circle class=\"replay\" cx=\"" + at + "\" cy=\"11\" r=\"5\">" +
             SvgTitle("idempotency replay: the ledger answered (key " + mark.detail + ")") +
             "</circle>";
    case MarkKind::kMismatch:
      return "<circle class=\"mismatch\" cx=\"" + at + "\" cy=\"11\" r=\"5\">" +
             SvgTitle("idempotency key mismatch (key " + mark.detail + ")") + "</circle>";
    case MarkKind::kBreakerRejected:
      return SvgRect("breaker-reject", x - 4, 7, 8, 8) + ">" +
             SvgTitle("rejected by the " + mark.detail + " breaker: the backend was not called") +
             "</rect>";
    case MarkKind::kRetrySuppressed:
      return SvgRect("suppressed", x - 1, 3, 3, 16) + ">" + SvgTitle("no retry: " + mark.detail) +
             "</rect>";
    case MarkKind::kWouldHave:
      return SvgRect("would-have", x - 3, 8, 6, 6) + ">" + SvgTitle("shadow: " + mark.detail) +
             "</rect>";
  }
  return std::string();
}

std::string CallRow(const TraceCall& call, size_t row, const TimeAxis& axis) {
  const std::string outcome = call.outcome.empty() ? "unfinished" : call.outcome;
  std::string svg = "<g class=\"call\"" + SvgAttr("data-tool", call.tool) +
                    SvgAttr("data-outcome", outcome) + SvgAttr("data-call-id", call.call_id) +
                    SvgAttr("data-request-id", call.request_id) +
                    SvgAttr("data-attempts", std::to_string(call.attempts.size())) +
                    " transform=\"translate(0," + SvgNum(kTop + kRowHeight * row) + ")\">";
  std::string tip =
      call.tool + " (request " + call.request_id + ", call " + call.call_id + "): " + outcome;
  if (!call.reason.empty()) tip += " — " + call.reason;
  if (call.duration_ms >= 0) tip += ", " + HumanMs(call.duration_ms);
  tip += ", " + std::to_string(call.attempts.size()) + " attempt(s)";
  svg += SvgTitle(tip);
  if (row % 2 == 1) svg += SvgRect("stripe", 0, 0, kWidth, kRowHeight) + "/>";
  svg += "<text class=\"label\" x=\"4\" y=\"15\">" + HtmlEscape(Clip(call.tool, kLabelBytes)) +
         (call.request_id.empty() ? "" : " #" + HtmlEscape(Clip(call.request_id, 12))) + "</text>";
  const double x1 = axis.X(static_cast<double>(call.start_ms));
  const double x2 = std::max(x1 + 2, axis.X(static_cast<double>(CallEndMs(call))));
  svg += "<line class=\"span\"" + SvgAttr("data-outcome", outcome) + " x1=\"" + SvgNum(x1) +
         "\" x2=\"" + SvgNum(x2) + "\" y1=\"11\" y2=\"11\"/>";
  for (const TraceAttempt& attempt : call.attempts) svg += AttemptSvg(call, attempt, axis);
  for (const TraceMark& mark : call.marks) svg += MarkSvg(mark, axis);
  return svg + "</g>";
}

// One backend's state over time: [from, state] steps, the first from the axis start.
std::vector<std::pair<int64_t, std::string>> BreakerSteps(const TraceModel& model,
                                                          const std::string& backend, int64_t t0) {
  std::vector<std::pair<int64_t, std::string>> steps;
  for (const BreakerChange& change : model.breaker_changes) {
    if (change.backend != backend) continue;
    if (steps.empty()) steps.emplace_back(t0, change.previous.empty() ? "closed" : change.previous);
    steps.emplace_back(change.at_ms, change.state);
  }
  if (steps.empty()) steps.emplace_back(t0, "unknown");  // only rejections were traced
  return steps;
}

}  // namespace

TimelineRows PickTimelineRows(const TraceModel& model, size_t first_calls, size_t max_rows) {
  TimelineRows rows;
  for (size_t i = 0; i < model.calls.size(); ++i) {
    const bool failing = model.calls[i].failing();
    rows.failing += failing ? 1 : 0;
    if (rows.shown.size() < max_rows && (i < first_calls || failing)) {
      rows.shown.push_back(i);
    } else if (failing) {
      ++rows.failing_left_out;
    }
  }
  return rows;
}

TimeAxis ReportAxis(const TraceModel& model) {
  TimeAxis axis;
  axis.left = kLabelWidth;
  axis.width = kWidth - kLabelWidth - 20;
  if (model.first_ms < 0) return axis;
  axis.t0_ms = model.first_ms;
  axis.t1_ms = std::max(model.last_ms, model.first_ms + 1);
  return axis;
}

std::string TimelineSvg(const TraceModel& model, const std::vector<size_t>& rows,
                        const TimeAxis& axis) {
  const double height = kTop + kRowHeight * static_cast<double>(rows.size()) + 4;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + SvgNum(kWidth) +
                    "\" height=\"" + SvgNum(height) + "\" viewBox=\"0 0 " + SvgNum(kWidth) + " " +
                    SvgNum(height) + "\" role=\"img\" aria-label=\"calls over time\">";
  svg += AxisSvg(axis, kTop, height - kTop);
  for (size_t row = 0; row < rows.size(); ++row) svg += CallRow(model.calls[rows[row]], row, axis);
  return svg + "</svg>";
}

std::string BreakerBandsSvg(const TraceModel& model, const TimeAxis& axis) {
  std::vector<std::string> backends;
  std::map<std::string, std::vector<int64_t>> rejections;
  for (const BreakerChange& change : model.breaker_changes) {
    if (std::find(backends.begin(), backends.end(), change.backend) == backends.end()) {
      backends.push_back(change.backend);
    }
  }
  for (const TraceCall& call : model.calls) {
    for (const TraceMark& mark : call.marks) {
      if (mark.kind != MarkKind::kBreakerRejected) continue;
      if (std::find(backends.begin(), backends.end(), call.backend) == backends.end()) {
        backends.push_back(call.backend);
      }
      rejections[call.backend].push_back(mark.at_ms);
    }
  }
  if (backends.empty()) return std::string();
  const double height = kTop + kRowHeight * static_cast<double>(backends.size()) + 4;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + SvgNum(kWidth) +
                    "\" height=\"" + SvgNum(height) + "\" viewBox=\"0 0 " + SvgNum(kWidth) + " " +
                    SvgNum(height) + "\" role=\"img\" aria-label=\"breaker states over time\">";
  svg += AxisSvg(axis, kTop, height - kTop);
  for (size_t row = 0; row < backends.size(); ++row) {
    const std::string& backend = backends[row];
    svg += "<g class=\"breaker\"" + SvgAttr("data-backend", backend) + " transform=\"translate(0," +
           SvgNum(kTop + kRowHeight * static_cast<double>(row)) + ")\">";
    svg += "<text class=\"label\" x=\"4\" y=\"15\">" + HtmlEscape(Clip(backend, kLabelBytes)) +
           "</text>";
    const auto steps = BreakerSteps(model, backend, axis.t0_ms);
    for (size_t i = 0; i < steps.size(); ++i) {
      const int64_t from = steps[i].first;
      const int64_t to = i + 1 < steps.size() ? steps[i + 1].first : axis.t1_ms;
      const double x = axis.X(static_cast<double>(from));
      svg += SvgRect("band", x, 3, std::max(1.0, axis.X(static_cast<double>(to)) - x), 16) +
             SvgAttr("data-state", steps[i].second) + ">" +
             SvgTitle(backend + ": " + steps[i].second + " from +" +
                      HumanMs(static_cast<double>(from - axis.t0_ms)) + " to +" +
                      HumanMs(static_cast<double>(to - axis.t0_ms))) +
             "</rect>";
    }
    for (const int64_t at : rejections[backend]) {
      const double x = axis.X(static_cast<double>(at));
      svg += "<line class=\"reject-tick\" x1=\"" + SvgNum(x) + "\" x2=\"" + SvgNum(x) +
             "\" y1=\"3\" y2=\"19\"/>";
    }
    svg += "</g>";
  }
  return svg + "</svg>";
}

}  // namespace keel
