#include "server/trace/report_intents.h"

#include <algorithm>
#include <map>
#include <vector>

#include "server/trace/html_text.h"
#include "server/trace/report_svg.h"

namespace keel {
namespace {

constexpr size_t kOutcomesShown = 8;  // per intent; "…" after

struct IntentRow {
  std::string intent;
  std::string tool;
  size_t calls = 0;
  size_t attempts = 0;
  size_t retries = 0;
  double backoff_ms = 0;
  std::vector<std::string> outcomes;
};

std::string IntentRowHtml(const IntentRow& row) {
  std::string outcomes;
  for (size_t i = 0; i < row.outcomes.size() && i < kOutcomesShown; ++i) {
    outcomes += "<span class=\"outcome\" data-outcome=\"" + HtmlEscape(row.outcomes[i]) + "\">" +
                HtmlEscape(row.outcomes[i]) + "</span> ";
  }
  if (row.outcomes.size() > kOutcomesShown) outcomes += "\xE2\x80\xA6";
  return "<tr class=\"intent\" data-intent=\"" + HtmlEscape(row.intent) + "\" data-tool=\"" +
         HtmlEscape(row.tool) + "\" data-calls=\"" + std::to_string(row.calls) +
         "\" data-attempts=\"" + std::to_string(row.attempts) + "\" data-retries=\"" +
         std::to_string(row.retries) + "\"><td><code>" + HtmlEscape(Clip(row.intent, 80)) +
         "</code></td><td>" + HtmlEscape(Clip(row.tool, 60)) + "</td><td>" +
         std::to_string(row.calls) + "</td><td>" + std::to_string(row.attempts) + "</td><td>" +
         std::to_string(row.retries) + "</td><td>" +
         (row.backoff_ms > 0 ? HumanMs(row.backoff_ms) : "") + "</td><td>" + outcomes +
         "</td></tr>";
}

}  // namespace

std::string IntentsSection(const TraceModel& model) {
  std::map<std::string, IntentRow> by_intent;
  for (const TraceCall& call : model.calls) {
    IntentRow& row = by_intent[call.intent];
    row.intent = call.intent;
    row.tool = call.tool;
    ++row.calls;
    row.attempts += call.attempts.size();
    row.retries += call.attempts.size() > 1 ? call.attempts.size() - 1 : 0;
    for (const TraceMark& mark : call.marks) {
      if (mark.kind == MarkKind::kBackoff) row.backoff_ms += mark.length_ms;
    }
    row.outcomes.push_back(call.outcome.empty() ? "unfinished" : call.outcome);
  }
  std::vector<IntentRow> rows;
  size_t plain = 0;  // one call, at most one attempt
  for (auto& [intent, row] : by_intent) {
    if (row.retries == 0 && row.calls == 1) {
      ++plain;
    } else {
      rows.push_back(std::move(row));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const IntentRow& a, const IntentRow& b) {
    return a.retries != b.retries ? a.retries > b.retries : a.calls > b.calls;
  });
  std::string html =
      "<section id=\"retries\"><h2>Retries per intent</h2><p class=\"note\">An intent is a "
      "tool and idempotency key (a client's retry under the same key is the same intent), "
      "else one call. <i>Calls</i> are the client's tries, <i>attempts</i> keel's; "
      "<i>retries</i> are the attempts keel added.</p>";
  if (rows.empty()) {
    html += "<p class=\"empty\">No intent was retried.</p>";
  } else {
    html +=
        "<table class=\"intents\"><tr><th>intent</th><th>tool</th><th>calls</th>"
        "<th>attempts</th><th>retries</th><th>backoff</th><th>outcomes</th></tr>";
    for (size_t i = 0; i < rows.size() && i < kMaxIntentRows; ++i) html += IntentRowHtml(rows[i]);
    html += "</table>";
    if (rows.size() > kMaxIntentRows) {
      html += "<p class=\"cap-note\">" + std::to_string(rows.size() - kMaxIntentRows) +
              " more retried intent(s) are not listed.</p>";
    }
  }
  if (plain > 0) {
    html += "<p class=\"note\">" + std::to_string(plain) +
            " intent(s) made one call with one attempt and are not listed.</p>";
  }
  return html + "</section>";
}

}  // namespace keel
