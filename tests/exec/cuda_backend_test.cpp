// The GPU backend on one rank. Without a CUDA device every test skips and says why; with one, this
// main initialises MPI (a singleton, or `mpirun -np 1`) and tiny Programs run for real.
#include "exec/cuda_backend.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace {

using paratwin::exec::Finished;
using paratwin::workloads::Dtype;
using paratwin::workloads::GemmShape;
using paratwin::workloads::Op;
using paratwin::workloads::OpKind;
using paratwin::workloads::Program;
using paratwin::workloads::Role;
using paratwin::workloads::Stream;

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const paratwin::exec::CudaDevices devices = paratwin::exec::cuda_devices();
    if (devices.count == 0) GTEST_SKIP() << "no GPU: " << devices.why;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1) GTEST_SKIP() << "these tests run on one MPI rank, not " << size;
  }
};

Op op_of(OpKind kind, Stream stream, const char* name, double bytes = 0) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.name = name;
  op.bytes = bytes;
  return op;
}

// One rank, one op of every kind that a single rank can run, on several streams, no dependencies.
Program one_rank_program() {
  Program p;
  p.workload_name = "cuda-backend-test";
  p.grid = paratwin::workloads::Grid({{"pipe", 1}, {"data", 1}});
  p.placement_order = {"data"};
  p.devices_per_node = 1;
  Role role;
  role.name = "stage 0";
  role.ranks = 1;
  constexpr double kMiB = 1 << 20;
  const auto gemm = [](const char* name, GemmShape shape) {
    Op op = op_of(OpKind::gemm, Stream::compute, name);
    op.gemm = shape;
    op.flops = 2.0 * static_cast<double>(shape.m * shape.n * shape.k * shape.batch);
    return op;
  };
  const auto collective = [&](OpKind kind, const char* name) {
    Op op = op_of(kind, Stream::data, name, kMiB);
    op.group = p.grid.mask("data");
    op.root = 0;
    return op;
  };
  role.ops = {op_of(OpKind::alloc, Stream::compute, "activations.stash", 64 * kMiB),
              gemm("fc1", {256, 512, 128, 1, false, true}),
              gemm("attention.scores", {64, 64, 32, 8, true, false}),
              op_of(OpKind::elementwise, Stream::compute, "gelu", kMiB),
              collective(OpKind::all_reduce, "grad.all_reduce"),
              collective(OpKind::all_gather, "weights.all_gather"),
              collective(OpKind::reduce_scatter, "grad.reduce_scatter"),
              collective(OpKind::broadcast, "broadcast"),
              op_of(OpKind::host_transfer, Stream::host, "optimizer.h2d", kMiB),
              op_of(OpKind::optimizer, Stream::compute, "adam", kMiB),
              op_of(OpKind::host_transfer, Stream::host, "optimizer.d2h", kMiB),
              op_of(OpKind::free, Stream::compute, "activations.release", 64 * kMiB)};
  p.roles.push_back(role);
  return p;
}

// Starts every op of rank 0's role as the executor does: in list order (so each stream's order), each
// once its dependencies have ended; then drains and collects what is left.
std::vector<Finished> run_iteration(paratwin::exec::Backend& backend, const Program& program) {
  const Role& role = program.roles.at(static_cast<size_t>(program.role_of(0)));
  std::vector<bool> ended(role.ops.size(), false);
  std::vector<Finished> out;
  const auto collect = [&](const std::vector<Finished>& got) {
    for (const Finished& f : got) {
      EXPECT_LT(f.op, role.ops.size());
      EXPECT_FALSE(ended[f.op]) << "op " << f.op << " reported twice";
      ended[f.op] = true;
      out.push_back(f);
    }
    return !got.empty();
  };
  for (uint32_t i = 0; i < role.ops.size(); ++i) {
    const Op& op = role.ops[i];
    for (uint32_t d = 0; d < op.dep_count; ++d)
      while (!ended[role.deps_of(op)[d]])
        if (!collect(backend.wait())) {
          ADD_FAILURE() << "wait() returned nothing while op " << role.deps_of(op)[d] << " had not ended";
          return out;
        }
    backend.start(op, i);
  }
  backend.drain();
  while (out.size() < role.ops.size() && collect(backend.wait())) {
  }
  return out;
}

void expect_sane_times(const std::vector<Finished>& finished, const Role& role, double before, double after) {
  ASSERT_EQ(finished.size(), role.ops.size());
  std::vector<const Finished*> by_op(role.ops.size(), nullptr);
  for (const Finished& f : finished) {
    by_op[f.op] = &f;
    EXPECT_GE(f.end, f.start) << "op " << f.op;
    // The clock reference is good to a few microseconds.
    EXPECT_GE(f.start, before - 1e-4) << "op " << f.op;
    EXPECT_LE(f.end, after + 1e-4) << "op " << f.op;
  }
  // Ops of one stream ran one after the other, in list order.
  for (size_t i = 0; i < role.ops.size(); ++i)
    for (size_t j = i + 1; j < role.ops.size(); ++j)
      if (role.ops[i].stream == role.ops[j].stream) {
        EXPECT_GE(by_op[j]->start, by_op[i]->end - 1e-6) << "ops " << i << " and " << j;
        break;
      }
}

TEST_F(CudaBackendTest, RunsOpsOfEveryKindOnOneRank) {
  const Program program = one_rank_program();
  const auto backend = paratwin::exec::make_cuda_backend();
  EXPECT_EQ(backend->name(), "cuda");
  backend->prepare(program, 0);
  for (int iteration = 0; iteration < 2; ++iteration) {
    const double before = backend->now();
    const std::vector<Finished> finished = run_iteration(*backend, program);
    expect_sane_times(finished, program.roles[0], before, backend->now());
  }
  EXPECT_TRUE(backend->wait().empty()) << "nothing in flight: wait() returns at once";
}

TEST_F(CudaBackendTest, RunsTheTinyDataParallelExampleOnOneRank) {
  std::ifstream in(std::string(PARATWIN_EXAMPLES_DIR) + "/tiny-dp.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["parallelism"]["data"]["size"] = 1;
  doc.erase("optimizations");  // overlapping the gradient all-reduce is an error without data parallelism
  doc["training"]["dtype"] = "bf16";
  const Program program = paratwin::workloads::lower(paratwin::workloads::parse_workload(doc, "tiny-dp (1 rank)"));
  ASSERT_EQ(program.grid.size(), 1);
  const auto backend = paratwin::exec::make_cuda_backend();
  backend->prepare(program, 0);
  const double before = backend->now();
  const std::vector<Finished> finished = run_iteration(*backend, program);
  expect_sane_times(finished, program.roles[0], before, backend->now());
}

TEST_F(CudaBackendTest, RefusesBuffersLargerThanTheDevice) {
  Program program = one_rank_program();
  Op huge = op_of(OpKind::gemm, Stream::compute, "huge.gemm");
  huge.gemm = {1 << 20, 1 << 20, 1 << 20, 1, false, false};  // 6 TiB of bf16 operands
  program.roles[0].ops.push_back(huge);
  const auto backend = paratwin::exec::make_cuda_backend();
  try {
    backend->prepare(program, 0);
    FAIL() << "prepare accepted 6 TiB of buffers";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0"), std::string::npos) << what;
    EXPECT_NE(what.find("huge.gemm"), std::string::npos) << what;
    EXPECT_NE(what.find("bytes"), std::string::npos) << what;
  }
}

// C = op(A) op(B) on the host, column-major as cuda_gemm_check documents.
std::vector<float> reference_gemm(const GemmShape& g, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(static_cast<size_t>(g.batch * g.m * g.n), 0.0f);
  for (int64_t t = 0; t < g.batch; ++t)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          const float x = a[static_cast<size_t>(t * g.m * g.k + (g.trans_a ? l + i * g.k : i + l * g.m))];
          const float y = b[static_cast<size_t>(t * g.k * g.n + (g.trans_b ? j + l * g.n : l + j * g.k))];
          sum += static_cast<double>(x) * static_cast<double>(y);
        }
        c[static_cast<size_t>(t * g.m * g.n + i + j * g.m)] = static_cast<float>(sum);
      }
  return c;
}

TEST_F(CudaBackendTest, GemmMatchesTheHostReference) {
  // Small integers: exact in bf16, and every C entry (at most 3 * 2 * k = 96) is exact in bf16 too.
  const GemmShape shapes[] = {
      {7, 5, 16, 1, false, false}, {7, 5, 16, 1, true, false}, {7, 5, 16, 1, false, true}, {4, 6, 8, 3, true, true}};
  // fp8 (E4M3) holds these integers exactly too; its kernels take A transposed and B not, m and k
  // multiples of 16, and write bf16 (|C| <= 3 * 2 * 32 = 192, exact in bf16).
  const GemmShape fp8_shapes[] = {{16, 5, 32, 1, true, false}, {32, 8, 16, 3, true, false}};
  for (const Dtype dtype : {Dtype::bf16, Dtype::fp32, Dtype::fp8})
    for (const GemmShape& g :
         dtype == Dtype::fp8 ? std::span<const GemmShape>(fp8_shapes) : std::span<const GemmShape>(shapes)) {
      std::vector<float> a(static_cast<size_t>(g.batch * g.m * g.k)), b(static_cast<size_t>(g.batch * g.k * g.n));
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
      const std::vector<float> got = paratwin::exec::cuda_gemm_check(g, dtype, a, b);
      const std::vector<float> want = reference_gemm(g, a, b);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << paratwin::workloads::to_string(dtype) << " m=" << g.m << " n=" << g.n
                                   << " k=" << g.k << " batch=" << g.batch << " trans_a=" << g.trans_a
                                   << " trans_b=" << g.trans_b << " at " << i;
    }
}

TEST_F(CudaBackendTest, Fp8GemmRefusesALayoutItsKernelsDoNotRun) {
  const GemmShape g{16, 5, 32, 1, false, false};
  const std::vector<float> a(16 * 32, 1.0f), b(32 * 5, 1.0f);
  EXPECT_THROW(paratwin::exec::cuda_gemm_check(g, Dtype::fp8, a, b), std::invalid_argument);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // MPI only where there is a GPU to test: without one every test skips, and the binary then runs
  // anywhere, even where a singleton MPI cannot start.
  const bool gpu = paratwin::exec::cuda_devices().count > 0;
  if (gpu) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  }
  const int status = RUN_ALL_TESTS();
  if (gpu) MPI_Finalize();
  return status;
}
