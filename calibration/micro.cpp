#include "calibration/micro.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "calibration/fit.hpp"

namespace paratwin::calibration {

namespace {

using workloads::Op;
using workloads::OpKind;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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

}  // namespace

nlohmann::json run_micro(exec::Backend& backend, int rank, int ranks, const topology::Machine& machine,
                         const MicroOptions& options) {
  // One program whose ops are the benchmarks: groups of 2 ("pair") and of every rank.
  workloads::Program program;
  program.workload_name = "calibration";
  program.grid = workloads::Grid({{"pair", ranks >= 2 ? 2 : 1}, {"pipe", 1}, {"data", ranks >= 2 ? ranks / 2 : 1}});
  program.devices_per_node = ranks;
  workloads::Role role;
  role.name = "micro";
  role.ranks = ranks;
  const auto add = [&](Op op) {
    op.dep_begin = static_cast<uint32_t>(role.deps.size());
    role.ops.push_back(op);
  };
  std::vector<int64_t> sizes = options.quick ? std::vector<int64_t>{64, 128, 256, 512}
                                             : std::vector<int64_t>{64, 128, 256, 384, 512, 768, 1024, 1536};
  for (int64_t n : sizes)
    for (const auto& [m, k] : {std::pair<int64_t, int64_t>{n, n}, {4 * n, n}, {n, 4 * n}}) {
      Op op;
      op.kind = OpKind::gemm;
      op.name = "gemm";
      op.dtype = workloads::Dtype::fp32;
      op.gemm = {m, n, k, 1, false, false};
      op.flops = 2.0 * static_cast<double>(m * n * k);
      add(op);
    }
  for (double bytes :
       options.quick ? std::vector<double>{1e4, 1e6, 8e6} : std::vector<double>{1e3, 1e4, 1e5, 1e6, 4e6, 16e6, 64e6}) {
    Op op;
    op.kind = OpKind::elementwise;
    op.name = "sweep";
    op.bytes = bytes;
    add(op);
  }
  std::vector<workloads::AxisMask> groups;
  if (ranks >= 2) groups.push_back(program.grid.mask("pair"));
  if (ranks > 2) groups.push_back(program.grid.mask("pair") | program.grid.mask("data"));
  const std::vector<double> message =
      options.quick ? std::vector<double>{4e3, 256e3, 4e6} : std::vector<double>{1e3, 16e3, 256e3, 1e6, 4e6, 16e6};
  for (auto mask : groups)
    for (OpKind kind :
         {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather, OpKind::all_to_all, OpKind::broadcast})
      for (double bytes : message) {
        Op op;
        op.kind = kind;
        op.name = workloads::to_string(kind);
        op.stream = workloads::Stream::tensor;
        op.group = mask;
        op.root = 0;
        op.bytes = bytes;
        add(op);
      }
  program.roles.push_back(std::move(role));
  backend.prepare(program, rank);
  const auto& ops = program.roles[0].ops;

  // Every op alone, every rank at once; the slowest rank's time of each repeat, then the median.
  std::vector<double> seconds(ops.size());
  for (uint32_t i = 0; i < ops.size(); ++i) {
    std::vector<double> reps;
    for (int r = 0; r < options.repeats + 1; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      backend.start(ops[i], i);
      double took = 0;
      for (bool done = false; !done;)
        for (const auto& f : backend.wait()) {
          took = f.end - f.start;
          done = true;
        }
      double slowest = 0;
      MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) reps.push_back(slowest);  // the first run warms buffers and caches
    }
    seconds[i] = median(reps);
  }

  nlohmann::json out;
  out["backend"] = backend.name();
  out["ranks"] = ranks;
  out["machine"] = machine.name;
  auto& raw = out["measurements"];
  raw = nlohmann::json::array();
  const auto peak_it = machine.node.device.peak_flops.find("fp32");
  const double peak = peak_it != machine.node.device.peak_flops.end() ? peak_it->second : 1e12;
  std::vector<GemmPoint> gemm;
  std::vector<double> sweep_bytes, sweep_seconds;
  std::map<std::pair<int, int64_t>, std::pair<std::vector<double>, std::vector<double>>> lines;  // (kind, p)
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    nlohmann::json m = {{"kind", workloads::to_string(op.kind)}, {"seconds", seconds[i]}};
    if (op.kind == OpKind::gemm) {
      m["m"] = op.gemm.m;
      m["n"] = op.gemm.n;
      m["k"] = op.gemm.k;
      m["flops"] = op.flops;
      gemm.push_back({op.flops, op.flops / seconds[i] / peak});
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

  // Fits: the GEMM curve (a nominal peak below what the GEMMs reach is raised to it), launch overhead
  // and memory bandwidth from the sweeps, α per step and bus bandwidth per collective and group size.
  const GemmFit g = fit_gemm(gemm);
  double peak_fit = peak, eff = g.max_efficiency;
  if (eff > 1) {
    peak_fit = peak * eff;
    eff = 1;
  }
  const LineFit sweep = fit_line(sweep_bytes, sweep_seconds);
  auto& fit = out["fit"];
  fit["peak_tflops"] = {{"fp32", peak_fit / 1e12}};
  fit["gemm"] = {{"fp32", {{"max_efficiency", eff}, {"half_gflop", g.half_flops / 1e9}}}};
  fit["launch_overhead_us"] = std::max(0.0, sweep.intercept) * 1e6;
  fit["memory_GBps"] = 1 / sweep.slope / 1e9;
  out["fit_error"] = {{"gemm_rms_relative", g.rms_relative_error}, {"sweep_rms_relative", sweep.rms_relative_error}};
  std::vector<double> alphas, betas;
  for (const auto& [key, xy] : lines) {
    const auto kind = static_cast<OpKind>(key.first);
    const auto [steps, factor] = ring_terms(kind, static_cast<double>(key.second));
    const LineFit l = fit_line(xy.first, xy.second);
    const double alpha = std::max(0.0, l.intercept) / steps, beta = factor / l.slope;
    fit["collectives"].push_back({{"kind", workloads::to_string(kind)},
                                  {"group_size", key.second},
                                  {"alpha_us_per_step", alpha * 1e6},
                                  {"busbw_GBps", beta / 1e9},
                                  {"rms_relative_error", l.rms_relative_error}});
    if (kind == OpKind::all_reduce || kind == OpKind::reduce_scatter || kind == OpKind::all_gather) {
      alphas.push_back(alpha);
      betas.push_back(beta);
    }
  }
  if (!alphas.empty()) {
    fit["collective_step_us"] = median(alphas) * 1e6;
    fit["link_GBps"] = median(betas) / 1e9;
  }
  return out;
}

}  // namespace paratwin::calibration
