#pragma once
// `paratwin validate --fit` around the fit itself (validation/kernel_fit.hpp): which points each framework
// profile is fitted to, what the fit and the leave-one-suite-out test give (said as each is known: the
// fits take a while), and the profile file with the fitted value.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "validation/kernel_fit.hpp"
#include "validation/report.hpp"

namespace paratwin::validation {

// The end-to-end workload points of `suites` on `machine`, by the framework profile their workloads use
// (only `framework`'s when it is not empty). Throws InputError naming --machine when there is none.
std::map<std::string, std::vector<FitPoint>> fit_points(const std::vector<ReferenceSuite>& suites,
                                                        const std::string& machine, const std::string& framework);

// One framework profile's fit: to its declared calibration points, the others held out; to every point
// when none is declared (then leave-one-suite-out is the only transfer test).
struct FrameworkFit {
  std::string framework, machine;
  double before = 0;  // the profile's kernel_efficiency
  std::vector<FitPoint> points, fit_set, held;
  bool declared = false;
};
FrameworkFit plan_fit(const std::string& framework, const std::string& machine, const std::vector<FitPoint>& points);

// What comes before the fit runs: the profile's value, and that no calibration point was declared.
std::string fit_heading(const FrameworkFit& fit);

struct FitOutcome {
  double after = 0;                         // the fitted value
  std::vector<ValidationRow> fitted_after;  // the points fitted to, predicted with it
};

// Fits by `model` and says to `say`, each as soon as it is known: the fitted value and the errors of
// the points fitted to before and after, the errors of the points held out, and leave-one-suite-out
// (each suite predicted with the value fitted to the other suites' points, by the analytical model:
// fast) per suite and on average. Throws InputError naming a point that cannot be predicted.
FitOutcome run_fit(const std::vector<ReferenceSuite>& suites, KernelEfficiencyFit& fitter, const FrameworkFit& fit,
                   const std::string& model, const std::function<void(const std::string&)>& say);

// A framework profile file's text (`profile_text`) with kernel_efficiency set to `value`, its source
// naming the points it was fitted to on `machine`, the file's other keys in their order. Throws
// nlohmann::json::parse_error when the text is not JSON.
std::string profile_with_kernel_efficiency(const std::string& profile_text, double value, const std::string& machine,
                                           const std::vector<ValidationRow>& fitted);

}  // namespace paratwin::validation
