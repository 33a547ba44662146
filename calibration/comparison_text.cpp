#include "calibration/comparison_text.hpp"

#include <cmath>

#include "common/report_text.hpp"

namespace paratwin::calibration {

std::string comparison_text(const Comparison& c) {
  std::string out =
      printed("  iteration             predicted %.4g s, measured %.4g s (median of %zu), error %+.1f %%\n",
              c.predicted, c.measured_median, c.measured.size(), 100 * c.error());
  out += printed("  %-22s %13s %13s %9s\n", "op class (per rank)", "predicted [s]", "measured [s]", "error");
  for (const auto& r : c.classes)
    if (std::isfinite(r.error()))
      out += printed("  %-22s %13.4g %13.4g %+8.1f%%\n", r.name.c_str(), r.predicted, r.measured, 100 * r.error());
    else
      out += printed("  %-22s %13.4g %13.4g %9s\n", r.name.c_str(), r.predicted, r.measured, "-");
  return out;
}

}  // namespace paratwin::calibration
