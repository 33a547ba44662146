#pragma once
// Fitting machine-profile parameters to micro-benchmark measurements: the α-β line of a collective or
// message (the GEMM model's fit is in gemm_fit.hpp).
#include <vector>

namespace paratwin::calibration {

// y = intercept + slope · x by least squares on the relative error, with its RMS.
struct LineFit {
  double intercept = 0;
  double slope = 0;
  double rms_relative_error = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// y = a · u + b · v (no intercept) by least squares on the relative error: the simulator's collective
// model, time = steps · step cost + bus bytes / link bandwidth, over every kind and size at once.
struct PlaneFit {
  double a = 0, b = 0;
  double rms_relative_error = 0;
};
PlaneFit fit_plane(const std::vector<double>& u, const std::vector<double>& v, const std::vector<double>& y);

// The median of repeated measurements (the upper one of an even count); `v` must not be empty.
double median(std::vector<double> v);

}  // namespace paratwin::calibration
