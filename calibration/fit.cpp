#include "calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace paratwin::calibration {

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("fitting a line needs two or more points");
  // Weighted by 1/y²: the relative error counts, so the latency-bound small sizes are fitted as well
  // as the bandwidth-bound large ones.
  double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(y[i] > 0)) throw std::invalid_argument("fitting a line needs positive measurements");
    const double w = 1 / (y[i] * y[i]);
    s += w;
    sx += w * x[i];
    sy += w * y[i];
    sxx += w * x[i] * x[i];
    sxy += w * x[i] * y[i];
  }
  const double den = s * sxx - sx * sx;
  if (!(std::abs(den) > 0)) throw std::invalid_argument("fitting a line needs two different x values");
  LineFit f;
  f.slope = (s * sxy - sx * sy) / den;
  f.intercept = (sy - f.slope * sx) / s;
  double sq = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double rel = (f.intercept + f.slope * x[i]) / y[i] - 1;
    sq += rel * rel;
  }
  f.rms_relative_error = std::sqrt(sq / static_cast<double>(x.size()));
  return f;
}

PlaneFit fit_plane(const std::vector<double>& u, const std::vector<double>& v, const std::vector<double>& y) {
  if (u.size() != y.size() || v.size() != y.size() || y.size() < 2)
    throw std::invalid_argument("fitting a plane needs two or more points");
  double uu = 0, uv = 0, vv = 0, uy = 0, vy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!(y[i] > 0)) throw std::invalid_argument("fitting a plane needs positive measurements");
    const double w = 1 / (y[i] * y[i]);
    uu += w * u[i] * u[i];
    uv += w * u[i] * v[i];
    vv += w * v[i] * v[i];
    uy += w * u[i] * y[i];
    vy += w * v[i] * y[i];
  }
  const double den = uu * vv - uv * uv;
  if (!(std::abs(den) > 1e-12 * uu * vv)) throw std::invalid_argument("fitting a plane needs independent regressors");
  PlaneFit f;
  f.a = (uy * vv - vy * uv) / den;
  f.b = (vy * uu - uy * uv) / den;
  double sq = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double rel = (f.a * u[i] + f.b * v[i]) / y[i] - 1;
    sq += rel * rel;
  }
  f.rms_relative_error = std::sqrt(sq / static_cast<double>(y.size()));
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace paratwin::calibration
