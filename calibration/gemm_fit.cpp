#include "calibration/gemm_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "calibration/profile_format.hpp"
#include "common/input_error.hpp"

namespace paratwin::calibration {

namespace {

struct Errors {
  double rms = std::numeric_limits<double>::infinity();
  double max = 0;
};

Errors errors_of(const std::vector<GemmSample>& samples, const topology::GemmDevice& device,
                 const topology::GemmModel& model, double launch) {
  double sq = 0, worst = 0;
  for (const auto& s : samples) {
    const double rel = predicted_seconds(s, device, model, launch) / s.seconds - 1;
    sq += rel * rel;
    worst = std::max(worst, std::abs(rel));
  }
  return {std::sqrt(sq / static_cast<double>(samples.size())), worst};
}

// Solves the n×n system a·x = b in place (Gaussian elimination with partial pivoting); false when
// singular.
template <size_t N>
bool solve(std::array<std::array<double, N>, N> a, std::array<double, N> b, size_t n, std::array<double, N>& x) {
  for (size_t i = 0; i < n; ++i) {
    size_t pivot = i;
    for (size_t r = i + 1; r < n; ++r)
      if (std::abs(a[r][i]) > std::abs(a[pivot][i])) pivot = r;
    if (std::abs(a[pivot][i]) < 1e-300) return false;
    std::swap(a[i], a[pivot]);
    std::swap(b[i], b[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == i) continue;
      const double f = a[r][i] / a[i][i];
      for (size_t c = i; c < n; ++c) a[r][c] -= f * a[i][c];
      b[r] -= f * b[i];
    }
  }
  for (size_t i = 0; i < n; ++i) x[i] = b[i] / a[i][i];
  return true;
}

// For given tile overheads and reuse, a sample's time is linear in the rest: t = main·u + fixed +
// packed·w + other + launch, u = 1 / max_efficiency, w = 1 / packing bandwidth, other the split-K
// partials' memory time or, for a memory-bound shape, its whole memory time (then main = 0), both
// judged at the efficiency `efficiency_guess`. Least squares on the relative error, every coefficient
// non-negative (the best of the subsets that keep u), gives them in closed form.
topology::GemmModel linear_fit(const std::vector<GemmSample>& samples, const topology::GemmDevice& device, double k0,
                               double r, double launch, bool packing, double efficiency_guess) {
  constexpr size_t kTerms = 3;  // u, fixed, w
  std::vector<std::array<double, kTerms>> rows;
  std::vector<double> rhs;
  for (const auto& s : samples) {
    const auto t = topology::gemm_timing(s.shape, device, {efficiency_guess, k0, r, 0, 0});
    const double main = t.main_seconds * efficiency_guess;  // at max_efficiency 1
    const double other = t.seconds - t.main_seconds;
    const double packed = topology::cpu_traffic(s.shape, device).packed_from_cache;
    rows.push_back({main / s.seconds, 1 / s.seconds, packing ? packed / s.seconds : 0.0});
    rhs.push_back(1 - (launch + other) / s.seconds);
  }
  std::array<double, kTerms> best{1, 0, 0};
  double best_residual = std::numeric_limits<double>::infinity();
  for (const std::vector<size_t>& subset : {std::vector<size_t>{0, 1, 2}, {0, 1}, {0, 2}, {0}}) {
    const size_t n = subset.size();
    std::array<std::array<double, kTerms>, kTerms> a{};
    std::array<double, kTerms> b{}, x{};
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j)
        for (const auto& row : rows) a[i][j] += row[subset[i]] * row[subset[j]];
      for (size_t t = 0; t < rows.size(); ++t) b[i] += rows[t][subset[i]] * rhs[t];
    }
    if (!solve(a, b, n, x)) continue;
    std::array<double, kTerms> c{};
    bool feasible = x[0] > 0;
    for (size_t i = 0; i < n; ++i) {
      feasible = feasible && x[i] >= 0;
      c[subset[i]] = x[i];
    }
    if (!feasible) continue;
    double residual = 0;
    for (size_t t = 0; t < rows.size(); ++t) {
      const double e = rows[t][0] * c[0] + rows[t][1] * c[1] + rows[t][2] * c[2] - rhs[t];
      residual += e * e;
    }
    if (residual < best_residual) best_residual = residual, best = c;
  }
  return {1 / best[0], k0, r, best[1], best[2] > 0 ? 1 / best[2] : 0};
}

// Golden-section search of f on [a, b].
double golden(const std::function<double(double)>& f, double a, double b, int iterations) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < iterations; ++i) {
    if (fc < fd) {
      b = d, d = c, fd = fc;
      c = b - g * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + g * (b - a), fd = f(d);
    }
  }
  return (a + b) / 2;
}

}  // namespace

double predicted_seconds(const GemmSample& s, const topology::GemmDevice& device, const topology::GemmModel& model,
                         double launch_seconds) {
  return topology::gemm_timing(s.shape, device, model).seconds + launch_seconds;
}

GemmModelFit fit_gemm_model(const std::vector<GemmSample>& samples, const topology::GemmDevice& device,
                            double launch_seconds, bool packing) {
  if (samples.size() < 4) throw std::invalid_argument("fitting the GEMM model needs at least four measured shapes");
  for (const auto& s : samples)
    if (!(s.seconds > 0) || s.shape.m < 1 || s.shape.n < 1 || s.shape.k < 1 || s.shape.batch < 1)
      throw std::invalid_argument("GEMM measurements need positive shapes and times");
  if (!(device.peak_flops > 0)) throw std::invalid_argument("fitting the GEMM model needs the device's peak");
  // The memory-bound shapes depend on the efficiency: two rounds, the second from the first's.
  const auto fitted = [&](double k0, double r) {
    const auto first = linear_fit(samples, device, k0, r, launch_seconds, packing, 1.0);
    return linear_fit(samples, device, k0, r, launch_seconds, packing, first.max_efficiency);
  };
  const auto rms = [&](double k0, double r) { return errors_of(samples, device, fitted(k0, r), launch_seconds).rms; };
  // A grid over the two non-linear parameters (logarithmic: both matter by their order of magnitude) ...
  double best_k0 = 0, best_r = 0, best_rms = std::numeric_limits<double>::infinity();
  for (const double k0 : {0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0})
    for (const double r : {0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0})
      if (const double e = rms(k0, r); e < best_rms) best_rms = e, best_k0 = k0, best_r = r;
  // ... then each refined in turn over the bracket between its grid neighbours.
  for (int round = 0; round < 3; ++round) {
    const double k0 =
        golden([&](double v) { return rms(v, best_r); }, std::max(0.0, best_k0 / 2 - 0.5), best_k0 * 2 + 0.5, 24);
    if (const double e = rms(k0, best_r); e < best_rms) best_rms = e, best_k0 = k0;
    const double r =
        golden([&](double v) { return rms(best_k0, v); }, std::max(0.0, best_r / 2 - 0.25), best_r * 2 + 0.25, 24);
    if (const double e = rms(best_k0, r); e < best_rms) best_rms = e, best_r = r;
  }
  GemmModelFit fit;
  fit.model = fitted(best_k0, best_r);
  const auto errors = errors_of(samples, device, fit.model, launch_seconds);
  fit.rms_relative_error = errors.rms;
  fit.max_relative_error = errors.max;
  if (fit.model.max_efficiency > 1) {
    // Kernels faster than the nominal peak: raise the peak instead, the same rates.
    fit.peak_scale = fit.model.max_efficiency;
    fit.model.max_efficiency = 1;
  }
  return fit;
}

void fit_profile_gemms(nlohmann::json& profile, const topology::Machine& machine) {
  std::map<std::string, std::vector<GemmSample>> samples;  // by dtype
  for (const auto& m : profile.at("measurements"))
    if (m.at("kind") == "gemm")
      samples[m.value("dtype", std::string("fp32"))].push_back(
          {{m.at("m").get<int64_t>(), m.at("n").get<int64_t>(), m.at("k").get<int64_t>(), m.value("batch", int64_t{1})},
           m.at("time_s").get<double>()});
  auto& fit = profile.at("fit");
  for (const auto& g : fit.value("gemm_shapes", nlohmann::json::array()))
    samples[g.at("dtype").get<std::string>()].push_back(
        {{g.at("m").get<int64_t>(), g.at("n").get<int64_t>(), g.at("k").get<int64_t>(), g.at("batch").get<int64_t>()},
         g.at("time_s").get<double>()});
  const double launch = fit.at("launch_overhead_us").get<double>() * 1e-6;
  fit["gemm"] = nlohmann::json::object();
  for (const auto& [dtype, points] : samples) {
    const auto peak = machine.node.device.peak_flops.find(dtype);
    const topology::GemmDevice device =
        topology::gemm_device(machine.node.device, peak != machine.node.device.peak_flops.end() ? peak->second : 1e12,
                              fit.at("memory_GBps").get<double>() * 1e9, topology::dtype_bytes(dtype));
    // Only CPU BLAS libraries pack their operands (topology/gemm_model.hpp): a device of one compute unit.
    const GemmModelFit g = fit_gemm_model(points, device, launch, device.compute_units == 1);
    fit["peak_tflops"][dtype] = device.peak_flops * g.peak_scale / 1e12;
    fit["gemm"][dtype] = {{"max_efficiency", g.model.max_efficiency},
                          {"tile_overhead_k", g.model.tile_overhead_k},
                          {"operand_reuse", g.model.operand_reuse},
                          {"fixed_us", g.model.fixed_seconds * 1e6},
                          {"packing_GBps", g.model.packing_bandwidth / 1e9}};
    const std::string suffix = dtype == "fp32" ? "" : "_" + dtype;
    profile["fit_error"]["gemm_rms_relative" + suffix] = g.rms_relative_error;
    profile["fit_error"]["gemm_max_relative" + suffix] = g.max_relative_error;
  }
}

void refit_profile_gemms(nlohmann::json& profile, const std::string& source) {
  try {
    if (!profile.is_object() || !profile.contains("machine") || !profile.contains("measurements") ||
        !profile.contains("fit"))
      throw InputError(source, "is not a profile written by paratwin calibrate micro (machine, measurements, fit)");
    upgrade_profile(profile);
    fit_profile_gemms(profile, topology::resolve_machine(profile["machine"].get<std::string>()));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, std::string("does not read as a profile: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(source, e.what());
  }
}

}  // namespace paratwin::calibration
