#include "server/trace/report_latency.h"

#include <algorithm>
#include <array>
#include <map>
#include <vector>

#include "server/trace/html_text.h"
#include "server/trace/report_svg.h"

namespace keel {
namespace {

// Upper edges of the buckets, in ms; the last bucket is everything at or above 1e6.
constexpr std::array<double, 19> kBucketEdges = {1,   2,   5,   10,  20,  50,  100, 200, 500, 1e3,
                                                 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6};
constexpr double kBarWidth = 40;
constexpr double kChartHeight = 70;

size_t BucketOf(double ms) {
  return static_cast<size_t>(std::upper_bound(kBucketEdges.begin(), kBucketEdges.end(), ms) -
                             kBucketEdges.begin());
}

std::string BucketLabel(size_t bucket) {
  if (bucket >= kBucketEdges.size()) return std::string("\xE2\x89\xA5") + "1000s";  // ≥
  const double edge = kBucketEdges[bucket];
  // Compact: a label must fit under its 40 px bar.
  return "<" + (edge < 1000 ? Fixed(edge, 0) + "ms" : Fixed(edge / 1000, 0) + "s");
}

std::string HistogramSvg(const std::vector<double>& sorted) {
  std::array<size_t, kBucketEdges.size() + 1> counts{};
  for (const double ms : sorted) ++counts[BucketOf(ms)];
  const size_t first = BucketOf(sorted.front());
  const size_t last = BucketOf(sorted.back());
  const size_t most = *std::max_element(counts.begin(), counts.end());
  const double width = kBarWidth * static_cast<double>(last - first + 1);
  std::string svg = "<svg class=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    Fixed(width, 0) + "\" height=\"" + Fixed(kChartHeight + 30, 0) + "\">";
  for (size_t b = first; b <= last; ++b) {
    const double x = kBarWidth * static_cast<double>(b - first);
    const double h = counts[b] == 0 ? 0
                                    : std::max(1.0, kChartHeight * static_cast<double>(counts[b]) /
                                                        static_cast<double>(most));
    svg += "<rect class=\"bucket\" data-count=\"" + std::to_string(counts[b]) + "\" x=\"" +
           Fixed(x + 3, 1) + "\" y=\"" + Fixed(kChartHeight - h + 12, 1) + "\" width=\"" +
           Fixed(kBarWidth - 6, 1) + "\" height=\"" + Fixed(h, 1) + "\"><title>" +
           std::to_string(counts[b]) + " call(s) " + HtmlEscape(BucketLabel(b)) + "</title></rect>";
    if (counts[b] > 0) {
      svg += "<text class=\"n\" x=\"" + Fixed(x + kBarWidth / 2, 1) + "\" y=\"" +
             Fixed(kChartHeight - h + 9, 1) + "\">" + std::to_string(counts[b]) + "</text>";
    }
    svg += "<text x=\"" + Fixed(x + kBarWidth / 2, 1) + "\" y=\"" + Fixed(kChartHeight + 25, 1) +
           "\">" + HtmlEscape(BucketLabel(b)) + "</text>";
  }
  return svg + "</svg>";
}

std::string ToolLatency(const std::string& tool, std::vector<double>& durations) {
  std::sort(durations.begin(), durations.end());
  std::string html = "<div class=\"tool-latency\" data-tool=\"" + HtmlEscape(tool) +
                     "\" data-calls=\"" + std::to_string(durations.size()) + "\"><h3>" +
                     HtmlEscape(Clip(tool, 60)) + "</h3>";
  html +=
      "<table class=\"pct\"><tr><th>calls</th><th>p50</th><th>p95</th><th>p99</th>"
      "<th>max</th></tr><tr><td>" +
      std::to_string(durations.size()) + "</td>";
  for (const double p : {0.50, 0.95, 0.99}) {
    html += "<td>" + HumanMs(NearestRankPercentile(durations, p)) + "</td>";
  }
  html += "<td>" + HumanMs(durations.back()) + "</td></tr></table>";
  return html + HistogramSvg(durations) + "</div>";
}

}  // namespace

std::string LatencySection(const TraceModel& model) {
  std::map<std::string, std::vector<double>> by_tool;
  for (const TraceCall& call : model.calls) {
    if (call.end_ms >= 0 && call.duration_ms >= 0) by_tool[call.tool].push_back(call.duration_ms);
  }
  std::vector<std::pair<std::string, std::vector<double>>> tools(by_tool.begin(), by_tool.end());
  std::stable_sort(tools.begin(), tools.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::string html =
      "<section id=\"latency\"><h2>Latency per tool</h2><p class=\"note\">Call durations of "
      "finished calls (from admission to the answer, retries and backoffs included); "
      "percentiles by nearest rank.</p>";
  if (tools.empty()) return html + "<p class=\"empty\">No finished calls.</p></section>";
  html += "<div class=\"grid\">";
  for (size_t i = 0; i < tools.size() && i < kMaxLatencyTools; ++i) {
    html += ToolLatency(tools[i].first, tools[i].second);
  }
  html += "</div>";
  if (tools.size() > kMaxLatencyTools) {
    html += "<p class=\"cap-note\">" + std::to_string(tools.size() - kMaxLatencyTools) +
            " tool(s) with fewer calls are not shown.</p>";
  }
  return html + "</section>";
}

}  // namespace keel
