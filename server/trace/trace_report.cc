#include "server/trace/trace_report.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "server/trace/html_text.h"
#include "server/trace/report_intents.h"
#include "server/trace/report_latency.h"
#include "server/trace/report_svg.h"
#include "server/trace/report_timeline.h"
#include "server/trace/trace_log.h"

namespace keel {
namespace {

// The page's only styling; system fonts, so nothing is fetched.
constexpr const char* kStyle = R"css(
:root{--ok:#2f9e5b;--error:#e8891c;--timeout:#d63c3c;--cancelled:#8b8f99;--unfinished:#6d7fd6;
--ink:#1d2330;--muted:#5b6475;--line:#e3e6ec}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);
margin:0;padding:20px 28px;background:#fafbfc}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px}h3{font-size:14px;margin:0 0 4px}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef0f4;padding:1px 4px;border-radius:3px}
.note,.cap-note,.empty,.source{color:var(--muted);margin:2px 0 8px}
.cap-note{color:#8a4b00;background:#fff4e0;padding:4px 8px;border-radius:4px;display:inline-block}
ul.counts{list-style:none;padding:0;margin:10px 0;display:flex;flex-wrap:wrap;gap:8px}
ul.counts li{background:#fff;border:1px solid var(--line);border-left:4px solid #aab;
border-radius:4px;padding:4px 10px}
ul.counts li b{font-size:16px;margin-right:4px}
li[data-outcome=ok]{border-left-color:var(--ok)!important}
li[data-outcome=error]{border-left-color:var(--error)!important}
li[data-outcome=timeout]{border-left-color:var(--timeout)!important}
li[data-outcome=cancelled]{border-left-color:var(--cancelled)!important}
li[data-outcome=unfinished]{border-left-color:var(--unfinished)!important}
.scroll{overflow-x:auto;background:#fff;border:1px solid var(--line);border-radius:6px;padding:6px}
svg text{font:11px system-ui,sans-serif;fill:var(--ink)}
.axis line{stroke:var(--line)}.axis text{fill:var(--muted);font-size:10px;text-anchor:middle}
.stripe{fill:#f4f6f9}.call:hover .stripe,.call:hover{fill-opacity:1}
.call .label{font:11px ui-monospace,Menlo,monospace}
.span{stroke:#b9bfcb;stroke-width:2}
.attempt{stroke:#0003;stroke-width:.5;rx:2}
[data-outcome=ok]{--c:var(--ok)}[data-outcome=error]{--c:var(--error)}
[data-outcome=timeout]{--c:var(--timeout)}[data-outcome=cancelled]{--c:var(--cancelled)}
[data-outcome=unfinished]{--c:var(--unfinished)}
.attempt{fill:var(--c)}.attempt[data-error=attempt_timeout]{fill:var(--timeout)}
.span[data-outcome]{stroke:var(--c);stroke-opacity:.45}
.backoff{stroke:#3b6fd6;stroke-width:2;stroke-dasharray:3 2}
.timeout path{fill:var(--timeout)}.timeout text{fill:var(--timeout);font-size:9px;font-weight:600}
.cancel path{stroke:#7a2da8;stroke-width:2.2}
.replay{fill:#3b6fd6;stroke:#fff;stroke-width:1}.mismatch{fill:#c03d9a}
.breaker-reject{fill:#1d2330}.suppressed{fill:#7a2da8}.would-have{fill:none;stroke:#555}
.band{stroke:#fff;stroke-width:.5}.band[data-state=closed]{fill:#cfe9d8}
.band[data-state=open]{fill:#f1a7a7}.band[data-state=half_open]{fill:#f6d88f}
.band[data-state=unknown]{fill:#ddd}.reject-tick{stroke:#1d2330;stroke-width:1}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:6px 0 10px;color:var(--muted);font-size:12px}
.legend span{display:inline-flex;align-items:center;gap:5px}
.sw{display:inline-block;width:14px;height:10px;border-radius:2px}
.grid{display:flex;flex-wrap:wrap;gap:14px}
.tool-latency{background:#fff;border:1px solid var(--line);border-radius:6px;padding:10px 12px}
.histogram .bucket{fill:#6d8fd6}.histogram text{font-size:9px;fill:var(--muted);text-anchor:middle}
.histogram text.n{fill:var(--ink)}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;font-size:13px}
th{background:#f1f3f6;font-weight:600}
table.pct td{text-align:right}
.outcome{display:inline-block;padding:0 6px;border-radius:8px;font-size:11px;color:#fff;
background:var(--c,#999)}
)css";

constexpr const char* kLegend = R"html(<div class="legend">
<span><i class="sw" style="background:var(--ok)"></i>attempt ok</span>
<span><i class="sw" style="background:var(--error)"></i>attempt failed</span>
<span><i class="sw" style="background:var(--timeout)"></i>attempt timed out</span>
<span><i class="sw" style="background:var(--cancelled)"></i>cancelled</span>
<span><svg width="22" height="10"><line class="backoff" x1="1" x2="21" y1="5" y2="5"/></svg>backoff before a retry</span>
<span><svg width="12" height="10"><g class="timeout"><path d="M1 0L11 0L6 9Z"/></g></svg>timeout fired (its layer: attempt, idle, call)</span>
<span><svg width="12" height="12"><g class="cancel"><path d="M2 2L10 10M2 10L10 2"/></g></svg>cancel from the client</span>
<span><svg width="12" height="12"><circle class="replay" cx="6" cy="6" r="5"/></svg>idempotency replay</span>
<span><svg width="10" height="10"><rect class="breaker-reject" x="1" y="1" width="8" height="8"/></svg>rejected by an open breaker</span>
<span><svg width="6" height="14"><rect class="suppressed" x="1" y="0" width="3" height="14"/></svg>retry suppressed</span>
</div>)html";

std::string CountItem(const std::string& attrs, size_t n, const std::string& what) {
  return "<li class=\"count\" " + attrs + "><b>" + std::to_string(n) + "</b>" + what + "</li>";
}

std::string SummarySection(const TraceModel& model, const ReportOptions& options) {
  // In this order on the page: good news first.
  std::vector<std::pair<std::string, size_t>> outcomes = {
      {"ok", 0}, {"error", 0}, {"timeout", 0}, {"cancelled", 0}, {"unfinished", 0}};
  std::map<std::string, size_t> timeouts;
  std::map<MarkKind, size_t> marks;
  size_t attempts = 0;
  for (const TraceCall& call : model.calls) {
    const std::string outcome = call.outcome.empty() ? "unfinished" : call.outcome;
    auto slot = std::find_if(outcomes.begin(), outcomes.end(),
                             [&](const auto& entry) { return entry.first == outcome; });
    if (slot == outcomes.end()) slot = outcomes.insert(outcomes.end(), {outcome, 0});
    ++slot->second;
    attempts += call.attempts.size();
    for (const TraceMark& mark : call.marks) {
      ++marks[mark.kind];
      if (mark.kind == MarkKind::kTimeout) ++timeouts[mark.detail];
    }
  }
  size_t opened = 0;
  for (const BreakerChange& change : model.breaker_changes) opened += change.state == "open";
  std::string html = "<header id=\"summary\"><h1>keel trace report</h1><p class=\"source\">";
  html += "<code>" + HtmlEscape(Clip(options.source, 300)) + "</code>";
  if (model.first_ms >= 0) {
    html += " &middot; " + Rfc3339Micros(model.first_ms * 1000) + " to " +
            Rfc3339Micros(model.last_ms * 1000) + " (" +
            HumanMs(static_cast<double>(model.last_ms - model.first_ms)) + ")";
  }
  html += " &middot; " + std::to_string(model.records) + " records</p><ul class=\"counts\">";
  html += CountItem("data-kind=\"calls\"", model.calls.size(), "calls");
  for (const auto& [outcome, n] : outcomes) {
    if (n > 0 || outcome == "ok") {
      html += CountItem("data-outcome=\"" + HtmlEscape(outcome) + "\"", n, HtmlEscape(outcome));
    }
  }
  html += "</ul><ul class=\"counts\">";
  html += CountItem("data-kind=\"attempts\"", attempts, "attempts");
  html += CountItem("data-kind=\"backoffs\"", marks[MarkKind::kBackoff], "retries scheduled");
  for (const auto& [layer, n] : timeouts) {
    html += CountItem("data-kind=\"timeout\" data-layer=\"" + HtmlEscape(layer) + "\"", n,
                      "timeouts (" + HtmlEscape(Clip(layer, 20)) + ")");
  }
  html += CountItem("data-kind=\"cancels\"", marks[MarkKind::kCancel], "cancels");
  html += CountItem("data-kind=\"replays\"", marks[MarkKind::kReplay], "replays");
  html += CountItem("data-kind=\"breaker-rejects\"", marks[MarkKind::kBreakerRejected],
                    "breaker rejections");
  html += CountItem("data-kind=\"breaker-opens\"", opened, "breaker openings");
  html += "</ul>";
  if (model.skipped > 0) {
    html += "<p class=\"note skipped\" data-skipped=\"" + std::to_string(model.skipped) + "\">" +
            std::to_string(model.skipped) + " line(s) were not trace records and were skipped.</p>";
  }
  if (model.unmatched_cancels > 0) {
    html += "<p class=\"note\">" + std::to_string(model.unmatched_cancels) +
            " cancel(s) named a request id no call in the trace had.</p>";
  }
  return html + "</header>";
}

std::string Timeline(const TraceModel& model, const ReportOptions& options, const TimeAxis& axis) {
  std::string html =
      "<section id=\"timeline\"><h2>Calls over time</h2><p class=\"note\">One row per call, "
      "in the order keel admitted them; hover a bar or mark for details.</p>";
  html += kLegend;
  if (model.calls.empty()) return html + "<p class=\"empty\">No calls in this trace.</p></section>";
  const TimelineRows rows = PickTimelineRows(model, options.first_calls, options.max_rows);
  if (rows.shown.size() < model.calls.size()) {
    html += "<p class=\"cap-note\" data-shown=\"" + std::to_string(rows.shown.size()) +
            "\">Showing " + std::to_string(rows.shown.size()) + " of " +
            std::to_string(model.calls.size()) + " calls: the first " +
            std::to_string(options.first_calls) + ", then every failing call";
    if (rows.failing_left_out > 0) {
      html += " up to " + std::to_string(options.max_rows) + " rows (" +
              std::to_string(rows.failing_left_out) + " failing calls not drawn)";
    }
    html += ". The counts above and the tables below cover every call.</p>";
  }
  return html + "<div class=\"scroll\">" + TimelineSvg(model, rows.shown, axis) +
         "</div></section>";
}

std::string Breakers(const TraceModel& model, const TimeAxis& axis) {
  std::string html =
      "<section id=\"breakers\"><h2>Breaker states per backend</h2><p class=\"note\">"
      "<i class=\"sw\" style=\"background:#cfe9d8\"></i> closed &nbsp;<i class=\"sw\" "
      "style=\"background:#f1a7a7\"></i> open &nbsp;<i class=\"sw\" style=\"background:"
      "#f6d88f\"></i> half-open &nbsp;| ticks: calls rejected while open. Same time axis as "
      "the calls above.</p>";
  const std::string svg = BreakerBandsSvg(model, axis);
  if (svg.empty()) return html + "<p class=\"empty\">No breaker changed state.</p></section>";
  return html + "<div class=\"scroll\">" + svg + "</div></section>";
}

}  // namespace

std::string RenderTraceReport(const TraceModel& model, const ReportOptions& options) {
  const TimeAxis axis = ReportAxis(model);
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      // Nothing may be fetched: no scripts at all, styles and images only from this file.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:\">"
      "<title>keel trace report: " +
      HtmlEscape(Clip(options.source, 120)) + "</title><style>" + kStyle + "</style></head><body>";
  html += SummarySection(model, options);
  html += Timeline(model, options, axis);
  html += Breakers(model, axis);
  html += LatencySection(model);
  html += IntentsSection(model);
  return html +
         "<footer class=\"note\">Written by <code>keel trace report</code> from a "
         "<code>--trace-file</code>.</footer></body></html>\n";
}

}  // namespace keel
