// `keel trace report` (ADO-4): escaping of untrusted trace text, the page's fixed parts and
// the cap on the timeline. The page in a real browser: tests/interop/trace_report.test.mjs.
#include "server/trace/trace_report.h"

#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "server/trace/html_text.h"
#include "server/trace/report_timeline.h"

namespace keel::trace_report_test {
namespace {

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

TraceModel ModelOf(const std::string& text) {
  std::istringstream in(text);
  return ReadTraceModel(in);
}

std::string Call(const std::string& id, const std::string& tool, const std::string& outcome) {
  return R"({"event":"tool.call.start","ts_unix_ms":1000,"attributes":{"keel.call.id":")" + id +
         R"(","gen_ai.tool.name":)" + tool + "}}\n" +
         R"({"event":"tool.call.end","ts_unix_ms":1010,"attributes":{"keel.call.id":")" + id +
         R"(","outcome":")" + outcome + R"(","duration_ms":10}})" + "\n";
}

}  // namespace

TEST_CASE("HtmlEscape replaces the five markup characters and control characters",
          "[trace][ADO-4]") {
  CHECK(HtmlEscape(R"(<script>alert("x") & 'y'</script>)") ==
        "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;");
  CHECK(HtmlEscape("caf\xC3\xA9\tok") == "caf\xC3\xA9\tok");  // UTF-8 and tab pass through
  CHECK(HtmlEscape(std::string("a\x01"
                               "b",
                               3)) ==
        "a\xEF\xBF\xBD"
        "b");
}

TEST_CASE("Clip cuts at a UTF-8 character boundary and marks the cut", "[trace][ADO-4]") {
  CHECK(Clip("short", 10) == "short");
  CHECK(Clip("abcdef", 3) == "abc\xE2\x80\xA6");
  // "é" is two bytes: a cut after its first byte backs off to before it.
  CHECK(Clip("a\xC3\xA9z", 2) == "a\xE2\x80\xA6");
}

TEST_CASE("the report escapes tool names from the trace everywhere they appear", "[trace][ADO-4]") {
  const TraceModel model =
      ModelOf(Call("c1", R"("<img src=x onerror=alert(1)>\"")", "error") + "junk\n");
  const std::string page = RenderTraceReport(model, ReportOptions{"<trace>.jsonl"});
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("&lt;img src=x onerror=alert(1)&gt;&quot;") != std::string::npos);
  CHECK(page.find("&lt;trace&gt;.jsonl") != std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  // No URL but the SVG namespace's name (never fetched).
  CHECK(Count(page, "://") == Count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(page.find("data-skipped=\"1\"") != std::string::npos);
}

TEST_CASE("the report has its sections and one timeline row per call", "[trace][ADO-4]") {
  const TraceModel model = ModelOf(Call("a", "\"read\"", "ok") + Call("b", "\"read\"", "timeout"));
  const std::string page = RenderTraceReport(model, ReportOptions{"t.jsonl"});
  for (const char* id : {"id=\"summary\"", "id=\"timeline\"", "id=\"breakers\"", "id=\"latency\"",
                         "id=\"retries\""}) {
    CHECK(page.find(id) != std::string::npos);
  }
  CHECK(Count(page, "<g class=\"call\"") == 2);
  CHECK(page.find("<li class=\"count\" data-outcome=\"timeout\"><b>1</b>") != std::string::npos);
  CHECK(page.find("class=\"tool-latency\" data-tool=\"read\" data-calls=\"2\"") !=
        std::string::npos);
}

TEST_CASE("hostile times and durations render a page without overflow", "[trace][ADO-4]") {
  const TraceModel model = ModelOf(
      R"({"event":"tool.call.start","ts_unix_ms":9223372036854775807,"attributes":{"keel.call.id":"a"}})"
      "\n"
      R"({"event":"retry.scheduled","ts_unix_ms":5,"attributes":{"keel.call.id":"a","keel.retry.delay_ms":1e308}})"
      "\n"
      R"({"event":"tool.call.end","ts_unix_ms":-4,"attributes":{"keel.call.id":"a","duration_ms":1e300}})"
      "\n");
  CHECK(model.first_ms == 5);
  CHECK(model.last_ms == 5);
  const std::string page = RenderTraceReport(model, ReportOptions{"t.jsonl"});
  CHECK(page.find("centuries") != std::string::npos);
  CHECK(Count(page, "<g class=\"call\"") == 1);
}

TEST_CASE("a large trace draws the first calls and every failing one, and says so",
          "[trace][ADO-4]") {
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += Call("c" + std::to_string(i), "\"t\"", i % 100 == 99 ? "error" : "ok");
  }
  const TraceModel model = ModelOf(text);
  const TimelineRows rows = PickTimelineRows(model, 300, 1500);
  CHECK(rows.failing == 20);
  CHECK(rows.shown.size() == 300 + 17);  // c99, c199, c299 are among the first 300
  CHECK(rows.failing_left_out == 0);
  const TimelineRows tight = PickTimelineRows(model, 300, 305);
  CHECK(tight.shown.size() == 305);
  CHECK(tight.failing_left_out == 12);
  const std::string page = RenderTraceReport(model, ReportOptions{"big.jsonl"});
  CHECK(Count(page, "<g class=\"call\"") == 317);
  CHECK(page.find("Showing 317 of 2000 calls") != std::string::npos);
}

}  // namespace keel::trace_report_test
