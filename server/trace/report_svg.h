// Pieces shared by the SVG drawings of `keel trace report` (trace_report.h): the time axis
// that maps a trace's unix milliseconds to x, and number formatting for labels.
//
// Pure functions and values. Nothing here escapes text: callers pass only numbers and
// HtmlEscape'd strings (html_text.h).
#pragma once

#include <cstdint>
#include <string>

namespace keel {

// [t0_ms, t1_ms] drawn over [left, left + width] pixels; times outside are clamped.
struct TimeAxis {
  int64_t t0_ms = 0;
  int64_t t1_ms = 1;  // > t0_ms
  double left = 0;
  double width = 1;

  double X(double unix_ms) const;
  double Length(double ms) const;  // pixels for a duration
};

// A number for an SVG attribute or a label: fixed, `decimals` after the point.
std::string Fixed(double value, int decimals);
// "0.8 ms", "850 ms", "2.4 s", "3 min 2 s", "1 h 5 min".
std::string HumanMs(double ms);
// Tick marks and "+1.5 s" labels along `axis`, from y to y + height (grid lines).
std::string AxisSvg(const TimeAxis& axis, double y, double height);

}  // namespace keel
