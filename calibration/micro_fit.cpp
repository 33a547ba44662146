#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "calibration/fit.hpp"
#include "calibration/gemm_fit.hpp"
#include "calibration/micro_plan.hpp"
#include "common/schema_version.hpp"
#include "topology/machine.hpp"

namespace paratwin::calibration {

namespace {

using workloads::Op;
using workloads::OpKind;

// Steps and bus factor of a ring collective over p ranks (nccl-tests' conventions): time = steps·α +
// factor·n/β.
std::pair<double, double> ring_terms(OpKind kind, double p) {
  switch (kind) {
    case OpKind::all_reduce:
      return {2 * (p - 1), 2 * (p - 1) / p};
    case OpKind::broadcast:
      return {std::ceil(std::log2(p)), 1.0};
    default:  // reduce-scatter, all-gather, all-to-all
      return {p - 1, (p - 1) / p};
  }
}

using Lines = std::map<std::pair<int, int64_t>, std::pair<std::vector<double>, std::vector<double>>>;

// What the sweeps measured, for the fits: the element-wise sweep's bytes and seconds, and every
// collective's sizes and seconds by kind and group size.
struct Sweeps {
  std::vector<double> bytes, seconds;
  Lines lines;  // (kind, p)
};

// The raw measurements into the profile (`out`): the workloads' GEMM shapes as measured, and every
// op of the sweeps.
Sweeps record_measurements(const MicroPlan& plan, const MicroTimes& times, nlohmann::json& out) {
  const auto& program = plan.program;
  const auto& ops = program.roles[0].ops;
  const auto& seconds = times.seconds;
  const uint32_t flush = plan.flush;
  auto& raw = out["measurements"];
  Sweeps sweeps;
  auto& sweep_bytes = sweeps.bytes;
  auto& sweep_seconds = sweeps.seconds;
  auto& lines = sweeps.lines;
  auto& table = out["fit"]["gemm_shapes"];
  table = nlohmann::json::array();
  for (uint32_t i = plan.first_shape; i < plan.first_sweep_gemm; ++i) {
    const auto& g = ops[i].gemm;
    table.push_back({{"dtype", workloads::to_string(ops[i].dtype)},
                     {"m", g.m},
                     {"n", g.n},
                     {"k", g.k},
                     {"batch", g.batch},
                     {"trans_a", g.trans_a},
                     {"trans_b", g.trans_b},
                     {"time_s", seconds[i]}});
  }
  for (uint32_t i = plan.first_sweep_gemm; i < flush; ++i) {
    const Op& op = ops[i];
    nlohmann::json m = {{"kind", workloads::to_string(op.kind)}, {"time_s", seconds[i]}};
    if (op.kind == OpKind::gemm) {
      m["m"] = op.gemm.m;
      m["n"] = op.gemm.n;
      m["k"] = op.gemm.k;
      if (op.gemm.batch != 1) m["batch"] = op.gemm.batch;
      m["flops"] = op.flops;
      if (plan.gpu) m["dtype"] = workloads::to_string(op.dtype);
    } else if (op.kind == OpKind::elementwise) {
      m["bytes"] = op.bytes;
      sweep_bytes.push_back(op.bytes);
      sweep_seconds.push_back(seconds[i]);
    } else {
      const int64_t p = program.grid.group_size(op.group);
      m["bytes"] = op.bytes;
      m["group_size"] = p;
      auto& line = lines[{static_cast<int>(op.kind), p}];
      line.first.push_back(op.bytes);
      line.second.push_back(seconds[i]);
    }
    raw.push_back(std::move(m));
  }

  return sweeps;
}

// Every collective kind's fit: its step cost (a) and seconds per bus byte (b).
struct CollectiveFits {
  std::map<int, PlaneFit> kind_fit;
  double fastest = 0;  // seconds per bus byte of the fastest kind
  double worst_rms = 0;
  std::vector<double> steps_fitted;
};

CollectiveFits fit_collectives(const Lines& lines, nlohmann::json& fit) {
  // Per collective kind, the simulator's own form fitted over every size and group size measured:
  // seconds = steps · step cost + bus bytes · seconds per byte. The links get the fastest kind's
  // bandwidth; slower kinds keep the difference as their own cost per byte, and every kind its step.
  std::map<int, std::array<std::vector<double>, 3>> by_kind;  // steps, bus bytes, seconds
  for (const auto& [key, xy] : lines) {
    const auto kind = static_cast<OpKind>(key.first);
    const auto [steps, factor] = ring_terms(kind, static_cast<double>(key.second));
    const LineFit l = fit_line(xy.first, xy.second);
    fit["collectives"].push_back({{"kind", workloads::to_string(kind)},
                                  {"group_size", key.second},
                                  {"alpha_us_per_step", std::max(0.0, l.intercept) / steps * 1e6},
                                  {"busbw_GBps", factor / l.slope / 1e9},
                                  {"rms_relative_error", l.rms_relative_error}});
    auto& points = by_kind[key.first];
    for (size_t i = 0; i < xy.first.size(); ++i) {
      points[0].push_back(steps);
      points[1].push_back(factor * xy.first[i]);
      points[2].push_back(xy.second[i]);
    }
  }
  CollectiveFits fits;
  auto& kind_fit = fits.kind_fit;
  double& fastest = fits.fastest;  // seconds per bus byte of the fastest kind
  double& worst_rms = fits.worst_rms;
  auto& steps_fitted = fits.steps_fitted;
  for (const auto& [kind, points] : by_kind) {
    // One group size: steps are the same for every point, and the plane is a line through them.
    PlaneFit f;
    if (std::set<double>(points[0].begin(), points[0].end()).size() == 1) {
      const LineFit l = fit_line(points[1], points[2]);
      f = {std::max(0.0, l.intercept) / points[0][0], l.slope, l.rms_relative_error};
    } else {
      f = fit_plane(points[0], points[1], points[2]);
    }
    f.a = std::max(0.0, f.a);
    kind_fit[kind] = f;
    if (f.b > 0 && (fastest == 0 || f.b < fastest)) fastest = f.b;
    steps_fitted.push_back(f.a);
    worst_rms = std::max(worst_rms, f.rms_relative_error);
  }
  return fits;
}

// Per collective kind, Σ w·steps² and Σ w·steps·residual of the steps' extra cost while computing.
using KindExtra = std::map<int, std::pair<double, double>>;

// The compute core's speed lost while a collective is in flight, and what a collective's step costs
// more meanwhile (into `fit`; the measurements into `raw`).
KindExtra fit_interference(const MicroPlan& plan, const MicroTimes& times, const CollectiveFits& fits,
                           nlohmann::json& raw, nlohmann::json& fit) {
  const auto& program = plan.program;
  const auto& ops = program.roles[0].ops;
  const auto& seconds = times.seconds;
  const auto& interference = times.interference;
  const uint32_t flush = plan.flush, lead_in = plan.lead_in;
  const auto& kind_fit = fits.kind_fit;
  // A collective's modelled seconds alone: its kind's fit.
  const auto modelled = [&](const Op& op) {
    const auto [steps, factor] = ring_terms(op.kind, static_cast<double>(program.grid.group_size(op.group)));
    const auto& f = kind_fit.at(static_cast<int>(op.kind));
    return steps * f.a + factor * op.bytes * f.b;
  };
  // The compute core's speed lost while a collective is in flight: the GEMMs' extra seconds against the
  // seconds the collective was in flight during them, least squares through the origin. And what a
  // step costs more while computing, beyond the kind's fit: relative least squares per kind and over all.
  KindExtra kind_extra;
  if (!interference.empty()) {
    // The same collective's median alone, from the sweep above.
    const auto alone_seconds = [&](const Op& op) {
      for (uint32_t i = 0; i < flush; ++i)
        if (ops[i].kind == op.kind && ops[i].group == op.group && ops[i].bytes == op.bytes) return seconds[i];
      return 0.0;
    };
    double xy = 0, xx = 0, su = 0, sr = 0;
    for (const auto& m : interference) {
      const Op& op = ops[m.collective];
      const int64_t p = program.grid.group_size(op.group);
      const double in_flight = std::min(m.collective_in_compute, m.shared);
      raw.push_back({{"kind", "gemm_with_collective"},
                     {"collective", workloads::to_string(op.kind)},
                     {"bytes", op.bytes},
                     {"group_size", p},
                     {"gemm_flops", kLayerGemms * ops[lead_in].flops},
                     {"gemm_alone_s", m.alone},
                     {"gemm_shared_s", m.shared},
                     {"collective_alone_s", alone_seconds(op)},
                     {"collective_while_computing_s", m.collective_in_compute}});
      xy += (m.shared - m.alone) * in_flight;
      xx += in_flight * in_flight;
      const double steps = ring_terms(op.kind, static_cast<double>(p)).first;
      const double t = m.collective_in_compute, w = 1 / (t * t);
      auto& k = kind_extra[static_cast<int>(op.kind)];
      k.first += w * steps * steps;
      k.second += w * steps * (t - modelled(op));
    }
    for (const auto& [kind, sums] : kind_extra) {
      su += sums.first;
      sr += sums.second;
    }
    fit["compute_slowdown_communicating"] = std::clamp(xy / xx, 0.0, topology::kMaxComputeSlowdown);
    fit["overlapped_step_extra_us"] = std::max(0.0, sr / su) * 1e6;
  }
  return kind_extra;
}

}  // namespace

nlohmann::json fit_micro(const MicroPlan& plan, const MicroTimes& times, const topology::Machine& machine,
                         const std::string& backend, int ranks) {
  const auto& message_sizes = plan.message_sizes;
  const auto& message_seconds = times.message_seconds;
  nlohmann::json out;
  out["schema_version"] = kSchemaVersion;
  out["backend"] = backend;
  out["ranks"] = ranks;
  out["machine"] = machine.name;
  auto& raw = out["measurements"];
  raw = nlohmann::json::array();
  const Sweeps sweeps = record_measurements(plan, times, out);
  // Fits: launch overhead and memory bandwidth from the sweeps; the GEMM shape model per dtype over
  // every GEMM timed, the sweep's and the workloads' shapes (a nominal peak below what the GEMMs reach
  // is raised to it); α per step and bus bandwidth per collective and group size. The workloads' shapes
  // are also kept as measured, which the simulator prefers to the model for those shapes.
  const LineFit sweep = fit_line(sweeps.bytes, sweeps.seconds);
  const double launch = std::max(0.0, sweep.intercept);
  auto& fit = out["fit"];
  fit["launch_overhead_us"] = launch * 1e6;
  fit["memory_GBps"] = 1 / sweep.slope / 1e9;
  out["fit_error"]["sweep_rms_relative"] = sweep.rms_relative_error;
  fit_profile_gemms(out, machine);
  const CollectiveFits fits = fit_collectives(sweeps.lines, fit);
  const double fastest = fits.fastest;
  // Messages: α-β, and what they cost beyond the links (the fastest collective kind's bandwidth).
  if (!message_seconds.empty()) {
    const LineFit l = fit_line(message_sizes, message_seconds);
    for (size_t i = 0; i < message_sizes.size(); ++i)
      raw.push_back({{"kind", "message"}, {"bytes", message_sizes[i]}, {"time_s", message_seconds[i]}});
    fit["messages"] = {{"alpha_us", std::max(0.0, l.intercept) * 1e6},
                       {"GBps", 1 / l.slope / 1e9},
                       {"rms_relative_error", l.rms_relative_error}};
    if (fastest > 0)
      fit["message_cost"] = {{"step_us", std::max(0.0, l.intercept) * 1e6},
                             {"per_byte_ns", std::max(0.0, l.slope - fastest) * 1e9}};
  }
  const KindExtra kind_extra = fit_interference(plan, times, fits, raw, fit);
  if (fastest > 0) {
    fit["collective_step_us"] = median(fits.steps_fitted) * 1e6;
    fit["link_GBps"] = 1 / fastest / 1e9;
    for (const auto& [kind, f] : fits.kind_fit) {
      nlohmann::json cost = {{"kind", workloads::to_string(static_cast<OpKind>(kind))},
                             {"step_us", f.a * 1e6},
                             {"per_byte_ns", std::max(0.0, f.b - fastest) * 1e9},
                             {"rms_relative_error", f.rms_relative_error}};
      if (const auto it = kind_extra.find(kind); it != kind_extra.end())
        cost["overlapped_extra_us"] = std::max(0.0, it->second.second / it->second.first) * 1e6;
      fit["collective_costs"].push_back(std::move(cost));
    }
    out["fit_error"]["collectives_rms_relative_worst_kind"] = fits.worst_rms;
  }
  return out;
}

}  // namespace paratwin::calibration
