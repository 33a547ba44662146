#include "validation/kernel_fit.hpp"

#include <cmath>

#include "common/input_error.hpp"

namespace paratwin::validation {

std::vector<ValidationRow> KernelEfficiencyFit::predict(const std::vector<FitPoint>& points, double value,
                                                        const std::string& model) {
  std::vector<ReferenceTask> tasks;
  for (const auto& p : points) {
    std::string m = model;
    if (m == "auto") m = gpus_[p.suite][p.point] <= simulate_up_to_ ? "simulate" : "analytical";
    tasks.push_back({p.suite, p.point, m});
  }
  ReferenceOptions options = options_;
  options.kernel_efficiency[framework_] = value;
  auto rows = to_rows(suites_, gpus_, tasks, predict_points(suites_, tasks, options));
  for (const auto& r : rows)
    if (!r.predicted) throw InputError(r.suite->name + ": " + r.point->label, "cannot be predicted: " + r.error);
  return rows;
}

double KernelEfficiencyFit::fit(const std::vector<FitPoint>& points, const std::string& model) {
  const auto cost = [&](double x) {
    double sum = 0;
    for (const auto& r : predict(points, x, model)) sum += r.relative_error() * r.relative_error();
    return sum;
  };
  const double g = (std::sqrt(5.0) - 1) / 2;
  double lo = 0.2, hi = 1.0;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = cost(x1), f2 = cost(x2);
  while (hi - lo > 1e-3) {
    if (f1 <= f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - g * (hi - lo), f1 = cost(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + g * (hi - lo), f2 = cost(x2);
    }
  }
  const double best = std::round((lo + hi) / 2 * 1000) / 1000;
  return cost(1.0) < cost(best) ? 1.0 : best;
}

}  // namespace paratwin::validation
