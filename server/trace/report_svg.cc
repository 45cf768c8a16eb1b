#include "server/trace/report_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace keel {

double TimeAxis::X(double unix_ms) const {
  const double span = static_cast<double>(t1_ms - t0_ms);
  const double at = std::clamp(unix_ms - static_cast<double>(t0_ms), 0.0, span);
  return left + width * at / span;
}

double TimeAxis::Length(double ms) const {
  return width * std::max(ms, 0.0) / static_cast<double>(t1_ms - t0_ms);
}

std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, std::isfinite(value) ? value : 0.0);
  return text;
}

std::string HumanMs(double ms) {
  if (!std::isfinite(ms) || ms < 0) return "?";
  if (ms > 1e15) return "centuries";  // a hostile duration; int64 seconds below stay in range
  if (ms == 0) return "0 ms";
  if (ms < 10) return Fixed(ms, 1) + " ms";
  if (ms < 1000) return Fixed(ms, 0) + " ms";
  if (ms < 60'000) return Fixed(ms / 1000, ms < 10'000 ? 2 : 1) + " s";
  const auto seconds = static_cast<int64_t>(ms / 1000);
  if (seconds < 3600) {
    return std::to_string(seconds / 60) + " min " + std::to_string(seconds % 60) + " s";
  }
  return std::to_string(seconds / 3600) + " h " + std::to_string(seconds % 3600 / 60) + " min";
}

std::string AxisSvg(const TimeAxis& axis, double y, double height) {
  // A step from 1-2-5 times a power of ten that gives about 8 ticks.
  const double span = static_cast<double>(axis.t1_ms - axis.t0_ms);
  double step = 1;
  for (double power = 1; step * 8 < span; power *= 10) {
    for (const double m : {1.0, 2.0, 5.0}) {
      step = m * power;
      if (step * 8 >= span) break;
    }
  }
  std::string svg = "<g class=\"axis\">";
  for (double t = 0; t <= span; t += step) {
    const std::string x = Fixed(axis.X(static_cast<double>(axis.t0_ms) + t), 1);
    svg += "<line x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + Fixed(y, 1) + "\" y2=\"" +
           Fixed(y + height, 1) + "\"/><text x=\"" + x + "\" y=\"" + Fixed(y - 4, 1) + "\">" +
           (t == 0 ? std::string("0") : "+" + HumanMs(t)) + "</text>";
  }
  return svg + "</g>";
}

}  // namespace keel
