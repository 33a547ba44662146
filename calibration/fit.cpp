#include "calibration/fit.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace paratwin::calibration {

namespace {

// For a fixed half size the best max_efficiency in the relative least-squares sense is closed-form:
// minimise Σ (m·s_i/e_i − 1)² with s_i = F_i/(F_i + h) → m = Σ(s_i/e_i) / Σ(s_i/e_i)².
double best_max(const std::vector<GemmPoint>& points, double half, double* rms) {
  double num = 0, den = 0;
  for (const auto& p : points) {
    const double r = p.flops / (p.flops + half) / p.efficiency;
    num += r;
    den += r * r;
  }
  const double m = num / den;
  double sq = 0;
  for (const auto& p : points) {
    const double rel = m * p.flops / (p.flops + half) / p.efficiency - 1;
    sq += rel * rel;
  }
  *rms = std::sqrt(sq / static_cast<double>(points.size()));
  return m;
}

}  // namespace

GemmFit fit_gemm(const std::vector<GemmPoint>& points) {
  if (points.size() < 2) throw std::invalid_argument("fitting a GEMM curve needs at least two measurements");
  for (const auto& p : points)
    if (!(p.flops > 0) || !(p.efficiency > 0)) throw std::invalid_argument("GEMM measurements must be positive");
  // The half size spans many decades: a coarse log scan, then a golden-section refinement.
  GemmFit best;
  best.rms_relative_error = std::numeric_limits<double>::infinity();
  double best_log = 0;
  for (double lg = 0; lg <= 15; lg += 0.05) {
    double rms = 0;
    const double m = best_max(points, std::pow(10.0, lg), &rms);
    if (rms < best.rms_relative_error) best = {m, std::pow(10.0, lg), rms}, best_log = lg;
  }
  double a = best_log - 0.05, b = best_log + 0.05;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 60; ++i) {
    const double c = b - g * (b - a), d = a + g * (b - a);
    double rc = 0, rd = 0;
    best_max(points, std::pow(10.0, c), &rc);
    best_max(points, std::pow(10.0, d), &rd);
    if (rc < rd)
      b = d;
    else
      a = c;
  }
  double rms = 0;
  const double half = std::pow(10.0, (a + b) / 2);
  const double m = best_max(points, half, &rms);
  if (rms < best.rms_relative_error) best = {m, half, rms};
  // No size dependence within the measured sizes: a flat curve says so better than a tiny half size.
  double flat = 0;
  const double m0 = best_max(points, 0, &flat);
  if (flat <= best.rms_relative_error * 1.0001) best = {m0, 0, flat};
  return best;
}

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

}  // namespace paratwin::calibration
