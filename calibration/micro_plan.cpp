#include "calibration/micro_plan.hpp"

#include <array>
#include <set>

namespace paratwin::calibration {

namespace {

using workloads::Op;
using workloads::OpKind;

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

MicroPlan plan_micro(int ranks, bool gpu, const MicroOptions& options) {
  // One program whose ops are the benchmarks: groups of 2 ("pair") and of every rank.
  MicroPlan plan;
  plan.gpu = gpu;
  workloads::Program& program = plan.program;
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
  // GEMMs in fp32 (the CPU's, and the profile's curve) and, on a GPU, in bf16 and fp8 too: the dtypes GPU
  // workloads run in (tensor cores; fp8 as Transformer Engine runs its GEMMs, E4M3 in, bf16 out, A
  // transposed), each with its own curve and its own table of workload shapes. A GPU reaches its
  // plateau only with far larger GEMMs than a core does.
  const std::vector<workloads::Dtype> dtypes =
      gpu ? std::vector<workloads::Dtype>{workloads::Dtype::fp32, workloads::Dtype::bf16, workloads::Dtype::fp8}
          : std::vector<workloads::Dtype>{workloads::Dtype::fp32};
  // cuBLASLt's FP8 kernels need m and k multiples of 16 (exec/cuda_support.hpp); Transformer Engine
  // refuses other shapes for fp8 too, so a workload shape that is not is not an fp8 shape.
  const auto runs = [](const workloads::GemmShape& g, workloads::Dtype d) {
    return d != workloads::Dtype::fp8 || (g.m % 16 == 0 && g.k % 16 == 0);
  };
  plan.first_shape = static_cast<uint32_t>(role.ops.size());
  for (const auto dtype : dtypes)
    for (const auto& shape : options.shapes)
      if (runs(shape, dtype)) add(gemm_op(shape, dtype));
  plan.first_sweep_gemm = static_cast<uint32_t>(role.ops.size());
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
      add(gemm_op({n, 8, n, 1, false, false}, dtype));  // n of 8: fp8 too (C's leading dimension is m)
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
  plan.message_sizes =
      options.quick ? std::vector<double>{4e3, 256e3, 4e6} : std::vector<double>{1e3, 16e3, 256e3, 1e6, 4e6, 16e6};
  for (auto mask : groups)
    for (OpKind kind :
         {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather, OpKind::all_to_all, OpKind::broadcast})
      for (double bytes : plan.message_sizes) add(collective_op(kind, mask, bytes));
  // Collectives are timed as workloads issue them: their buffers out of cache (a workload's are
  // written long before; a 64 MB sweep evicts them), right after a GEMM of a layer's size on every
  // rank, with no barrier between.
  plan.flush = static_cast<uint32_t>(role.ops.size());
  {
    Op op;
    op.kind = OpKind::elementwise;
    op.name = "flush";
    op.bytes = 64e6;
    add(op);
  }
  plan.lead_in = static_cast<uint32_t>(role.ops.size());
  add(gemm_op({256, 1024, 256, 1, false, false}));
  // Interference: a layer's GEMMs back to back for some milliseconds (the lead-in GEMM, kLayerGemms
  // times), alone and with each collective started just before them on every rank at once, so that
  // the collective's polls, copies and reductions share the core with them as in a workload.
  plan.first_interference = static_cast<uint32_t>(role.ops.size());
  if (ranks >= 2) {
    for (OpKind kind : {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather})
      for (double bytes : options.quick ? std::vector<double>{256e3} : std::vector<double>{256e3, 1e6, 4e6})
        add(collective_op(kind, groups.back(), bytes));
  }
  program.roles.push_back(std::move(role));
  return plan;
}

}  // namespace paratwin::calibration
