#include "calibration/micro.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "calibration/fit.hpp"
#include "calibration/gemm_fit.hpp"

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

std::array<int64_t, 6> key_of(const workloads::GemmShape& g) {
  return {g.m, g.n, g.k, g.batch, g.trans_a ? 1 : 0, g.trans_b ? 1 : 0};
}

Op gemm_op(const workloads::GemmShape& shape, workloads::Dtype dtype = workloads::Dtype::fp32) {
  Op op;
  op.kind = OpKind::gemm;
  op.name = "gemm";
  op.dtype = dtype;
  op.gemm = shape;
  op.flops = 2.0 * static_cast<double>(shape.batch * shape.m * shape.n * shape.k);
  return op;
}

Op collective_op(OpKind kind, workloads::AxisMask group, double bytes) {
  Op op;
  op.kind = kind;
  op.name = workloads::to_string(kind);
  op.stream = workloads::Stream::tensor;
  op.group = group;
  op.root = 0;
  op.bytes = bytes;
  return op;
}

}  // namespace

void add_gemm_shapes(const workloads::Program& program, std::vector<workloads::GemmShape>& shapes) {
  std::set<std::array<int64_t, 6>> seen;
  for (const auto& g : shapes) seen.insert(key_of(g));
  for (const auto& role : program.roles)
    for (const auto& op : role.ops)
      if (op.kind == OpKind::gemm && seen.insert(key_of(op.gemm)).second) shapes.push_back(op.gemm);
}

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
  // GEMMs in fp32 (the CPU's, and the profile's curve) and, on a GPU, in bf16 too: the dtype GPU
  // workloads run in (tensor cores), each with its own curve and its own table of workload shapes. A GPU
  // reaches its plateau only with far larger GEMMs than a core does.
  const bool gpu = backend.name() == "cuda";
  const std::vector<workloads::Dtype> dtypes =
      gpu ? std::vector<workloads::Dtype>{workloads::Dtype::fp32, workloads::Dtype::bf16}
          : std::vector<workloads::Dtype>{workloads::Dtype::fp32};
  const auto first_shape = static_cast<uint32_t>(role.ops.size());
  for (const auto dtype : dtypes)
    for (const auto& shape : options.shapes) add(gemm_op(shape, dtype));
  const auto first_sweep_gemm = static_cast<uint32_t>(role.ops.size());
  std::vector<int64_t> sizes;
  if (gpu)
    sizes = options.quick ? std::vector<int64_t>{128, 512, 2048, 8192}
                          : std::vector<int64_t>{64, 128, 256, 512, 1024, 2048, 4096, 8192};
  else
    sizes = options.quick ? std::vector<int64_t>{64, 128, 256, 512}
                          : std::vector<int64_t>{64, 128, 256, 384, 512, 768, 1024, 1536};
  // Per size, the regimes the GEMM model tells apart: square, tall, deep; skinny (few columns: a
  // router, a small head); batched with a short K or few columns (attention's products).
  for (const auto dtype : dtypes)
    for (int64_t n : sizes) {
      for (const auto& [m, k] : {std::pair<int64_t, int64_t>{n, n}, {4 * n, n}, {n, 4 * n}})
        add(gemm_op({m, n, k, 1, false, false}, dtype));
      add(gemm_op({n, 8, n, 1, false, false}, dtype));
      add(gemm_op({n, n, 32, 8, false, false}, dtype));
      add(gemm_op({n, 32, n, 8, false, false}, dtype));
    }
  // Element-wise sweeps; on a GPU up to 1 GB, far beyond its L2 (50 MB on an H100), or the bandwidth
  // fitted is the cache's.
  std::vector<double> sweeps;
  if (gpu)
    sweeps = options.quick ? std::vector<double>{1e4, 1e6, 64e6, 1e9}
                           : std::vector<double>{1e3, 1e4, 1e5, 1e6, 16e6, 64e6, 256e6, 1e9};
  else
    sweeps =
        options.quick ? std::vector<double>{1e4, 1e6, 8e6} : std::vector<double>{1e3, 1e4, 1e5, 1e6, 4e6, 16e6, 64e6};
  for (double bytes : sweeps) {
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
      for (double bytes : message) add(collective_op(kind, mask, bytes));
  // Collectives are timed as workloads issue them: their buffers out of cache (a workload's are
  // written long before; a 64 MB sweep evicts them), right after a GEMM of a layer's size on every
  // rank, with no barrier between.
  const auto flush = static_cast<uint32_t>(role.ops.size());
  {
    Op op;
    op.kind = OpKind::elementwise;
    op.name = "flush";
    op.bytes = 64e6;
    add(op);
  }
  const auto lead_in = static_cast<uint32_t>(role.ops.size());
  add(gemm_op({256, 1024, 256, 1, false, false}));
  // Interference: a layer's GEMMs back to back for some milliseconds (the lead-in GEMM, kLayerGemms
  // times), alone and with each collective started just before them on every rank at once, so that
  // the collective's polls, copies and reductions share the core with them as in a workload.
  const auto first_interference = static_cast<uint32_t>(role.ops.size());
  if (ranks >= 2) {
    for (OpKind kind : {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather})
      for (double bytes : options.quick ? std::vector<double>{256e3} : std::vector<double>{256e3, 1e6, 4e6})
        add(collective_op(kind, groups.back(), bytes));
  }
  program.roles.push_back(std::move(role));
  backend.prepare(program, rank);
  const auto& ops = program.roles[0].ops;

  // Every op alone, every rank at once, in rounds (one repeat of every op per round, so that a spell of
  // contention from other tenants of the machine spoils one repeat of many ops rather than every repeat
  // of a few); per repeat the slowest rank's time for compute, for a collective the fastest rank's (the
  // others' include waiting for the last to arrive), then the median over the rounds.
  const auto run_alone = [&](uint32_t i) {
    backend.start(ops[i], i);
    double took = 0;
    for (bool done = false; !done;)
      for (const auto& f : backend.wait()) {
        took = f.end - f.start;
        done = true;
      }
    return took;
  };
  std::vector<double> seconds(ops.size());
  std::vector<std::vector<double>> reps(flush);
  for (int r = 0; r < options.repeats + 1; ++r)
    for (uint32_t i = 0; i < flush; ++i) {
      const bool collective = workloads::is_collective(ops[i].kind);
      MPI_Barrier(MPI_COMM_WORLD);
      if (collective) {
        run_alone(flush);
        run_alone(lead_in);
      }
      double took = run_alone(i), combined = 0;
      MPI_Allreduce(&took, &combined, 1, MPI_DOUBLE, collective ? MPI_MIN : MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) reps[i].push_back(combined);  // the first round warms buffers and caches
    }
  for (uint32_t i = 0; i < flush; ++i) seconds[i] = median(reps[i]);

  // The GEMMs alone and with each collective in flight, alternately; each rank's own GEMM time, the
  // slowest rank per repeat, the median.
  struct Interference {
    uint32_t collective;
    double alone, shared;          // the GEMM's seconds
    double collective_in_compute;  // the collective's seconds while the GEMM runs
  };
  std::vector<Interference> interference;
  // Returns the GEMM's and the collective's seconds (slowest rank, median).
  constexpr int kLayerGemms = 8;
  const auto overlapped = [&](int64_t with) {
    std::vector<double> gemm_reps, collective_reps;
    for (int r = 0; r < options.repeats + 1; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (with >= 0) backend.start(ops[static_cast<size_t>(with)], static_cast<uint32_t>(with));
      double took[2] = {0, 0};  // the GEMMs' seconds, the collective's
      bool pending = with >= 0;
      const auto note = [&](const std::vector<exec::Finished>& finished) {
        for (const auto& f : finished) {
          if (f.op == lead_in) {
            took[0] += f.end - f.start;
          } else {
            took[1] = f.end - f.start;
            pending = false;
          }
        }
      };
      for (int g = 0; g < kLayerGemms; ++g) {
        backend.start(ops[lead_in], lead_in);
        note(backend.wait());
      }
      while (pending) note(backend.wait());
      double slowest[2] = {0, 0};
      MPI_Allreduce(took, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r == 0) continue;
      gemm_reps.push_back(slowest[0]);
      collective_reps.push_back(slowest[1]);
    }
    return std::pair{median(gemm_reps), median(collective_reps)};
  };
  for (uint32_t i = first_interference; i < ops.size(); ++i) {
    const double alone = overlapped(-1).first;
    const auto [shared, collective] = overlapped(i);
    interference.push_back({i, alone, shared, collective});
  }

  // Point-to-point: ranks 2k and 2k+1 exchange a message of each size (MPI_Isend/MPI_Irecv on
  // MPI_COMM_WORLD, the transport of the backend's pipeline messages), after the same cold start and
  // lead-in GEMM as the collectives; the fastest rank, the median over the repeats.
  const std::vector<double>& message_sizes = message;  // the collectives' sizes
  std::vector<double> message_seconds;
  if (ranks >= 2 && ranks % 2 == 0) {
    const int peer = rank ^ 1;
    std::vector<float> send(static_cast<size_t>(message_sizes.back() / 4), 1.0f), receive(send.size(), 0.0f);
    for (double bytes : message_sizes) {
      std::vector<double> reps;
      const int count = static_cast<int>(bytes / 4);
      for (int r = 0; r < options.repeats + 1; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        run_alone(flush);
        run_alone(lead_in);
        const double start = MPI_Wtime();
        MPI_Request requests[2];
        MPI_Irecv(receive.data(), count, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(send.data(), count, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        double took = MPI_Wtime() - start, fastest = 0;
        MPI_Allreduce(&took, &fastest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        if (r > 0) reps.push_back(fastest);
      }
      message_seconds.push_back(median(reps));
    }
  }

  nlohmann::json out;
  out["backend"] = backend.name();
  out["ranks"] = ranks;
  out["machine"] = machine.name;
  auto& raw = out["measurements"];
  raw = nlohmann::json::array();
  std::vector<double> sweep_bytes, sweep_seconds;
  std::map<std::pair<int, int64_t>, std::pair<std::vector<double>, std::vector<double>>> lines;  // (kind, p)
  auto& table = out["fit"]["gemm_shapes"];
  table = nlohmann::json::array();
  for (uint32_t i = first_shape; i < first_sweep_gemm; ++i) {
    const auto& g = ops[i].gemm;
    table.push_back({{"dtype", workloads::to_string(ops[i].dtype)},
                     {"m", g.m},
                     {"n", g.n},
                     {"k", g.k},
                     {"batch", g.batch},
                     {"trans_a", g.trans_a},
                     {"trans_b", g.trans_b},
                     {"seconds", seconds[i]}});
  }
  for (uint32_t i = first_sweep_gemm; i < flush; ++i) {
    const Op& op = ops[i];
    nlohmann::json m = {{"kind", workloads::to_string(op.kind)}, {"seconds", seconds[i]}};
    if (op.kind == OpKind::gemm) {
      m["m"] = op.gemm.m;
      m["n"] = op.gemm.n;
      m["k"] = op.gemm.k;
      if (op.gemm.batch != 1) m["batch"] = op.gemm.batch;
      m["flops"] = op.flops;
      if (gpu) m["dtype"] = workloads::to_string(op.dtype);
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

  // Fits: launch overhead and memory bandwidth from the sweeps; the GEMM shape model per dtype over
  // every GEMM timed, the sweep's and the workloads' shapes (a nominal peak below what the GEMMs reach
  // is raised to it); α per step and bus bandwidth per collective and group size. The workloads' shapes
  // are also kept as measured, which the simulator prefers to the model for those shapes.
  const LineFit sweep = fit_line(sweep_bytes, sweep_seconds);
  const double launch = std::max(0.0, sweep.intercept);
  auto& fit = out["fit"];
  fit["launch_overhead_us"] = launch * 1e6;
  fit["memory_GBps"] = 1 / sweep.slope / 1e9;
  out["fit_error"]["sweep_rms_relative"] = sweep.rms_relative_error;
  fit_profile_gemms(out, machine);
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
  std::map<int, PlaneFit> kind_fit;
  double fastest = 0, worst_rms = 0;  // seconds per bus byte of the fastest kind
  std::vector<double> steps_fitted;
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
  // Messages: α-β, and what they cost beyond the links (the fastest collective kind's bandwidth).
  if (!message_seconds.empty()) {
    const LineFit l = fit_line(message_sizes, message_seconds);
    for (size_t i = 0; i < message_sizes.size(); ++i)
      raw.push_back({{"kind", "message"}, {"bytes", message_sizes[i]}, {"seconds", message_seconds[i]}});
    fit["messages"] = {{"alpha_us", std::max(0.0, l.intercept) * 1e6},
                       {"GBps", 1 / l.slope / 1e9},
                       {"rms_relative_error", l.rms_relative_error}};
    if (fastest > 0)
      fit["message_cost"] = {{"step_us", std::max(0.0, l.intercept) * 1e6},
                             {"per_byte_ns", std::max(0.0, l.slope - fastest) * 1e9}};
  }
  // A collective's modelled seconds alone: its kind's fit.
  const auto modelled = [&](const Op& op) {
    const auto [steps, factor] = ring_terms(op.kind, static_cast<double>(program.grid.group_size(op.group)));
    const auto& f = kind_fit.at(static_cast<int>(op.kind));
    return steps * f.a + factor * op.bytes * f.b;
  };
  // The compute core's speed lost while a collective is in flight: the GEMMs' extra seconds against the
  // seconds the collective was in flight during them, least squares through the origin. And what a
  // step costs more while computing, beyond the kind's fit: relative least squares per kind and over all.
  std::map<int, std::pair<double, double>> kind_extra;  // per kind: Σ w·steps², Σ w·steps·residual
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
                     {"gemm_alone_seconds", m.alone},
                     {"gemm_shared_seconds", m.shared},
                     {"collective_seconds_alone", alone_seconds(op)},
                     {"collective_seconds_while_computing", m.collective_in_compute}});
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
    fit["compute_slowdown_communicating"] = std::clamp(xy / xx, 0.0, 0.95);
    fit["overlapped_step_extra_us"] = std::max(0.0, sr / su) * 1e6;
  }
  if (fastest > 0) {
    fit["collective_step_us"] = median(steps_fitted) * 1e6;
    fit["link_GBps"] = 1 / fastest / 1e9;
    for (const auto& [kind, f] : kind_fit) {
      nlohmann::json cost = {{"kind", workloads::to_string(static_cast<OpKind>(kind))},
                             {"step_us", f.a * 1e6},
                             {"per_byte_ns", std::max(0.0, f.b - fastest) * 1e9},
                             {"rms_relative_error", f.rms_relative_error}};
      if (const auto it = kind_extra.find(kind); it != kind_extra.end())
        cost["overlapped_extra_us"] = std::max(0.0, it->second.second / it->second.first) * 1e6;
      fit["collective_costs"].push_back(std::move(cost));
    }
    out["fit_error"]["collectives_rms_relative_worst_kind"] = worst_rms;
  }
  return out;
}

}  // namespace paratwin::calibration
