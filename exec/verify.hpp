#pragma once
// Verify mode: real data through the distributed layers exactly as the Program lowers them — the local
// GEMM shapes, the groups and the message sizes are read from the Program's ops — against a single-rank
// reference. A lowering with a wrong shape, group or size either fails its consistency check or
// computes a wrong answer; this proves the lowering, not just the timing.
#include <string>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::exec {

struct Check {
  std::string what;      // e.g. "3-D FC qkv: output (forward, all-reduce over y)"
  double error = 0;      // largest |distributed − reference| / largest |reference|, over all ranks
  double tolerance = 0;  // relative
  std::string problem;   // the Program's ops do not describe this algorithm: what is wrong
  bool ok() const { return problem.empty() && error <= tolerance; }
};

// Relative tolerance: the reference and the distributed sums add the same terms in other orders
// (double precision).
constexpr double kVerifyTolerance = 1e-9;

// The checks that apply to the Program: Megatron 1-D MLP (column- then row-parallel FC pair), AxoNN
// 3-D FC layers ([singh2025dissertation] Algorithm 3, a normal and a transposed one), and the pipeline's activations
// and gradients through every stage. Collective over MPI_COMM_WORLD (MPI rank == Program rank).
std::vector<Check> verify(const workloads::Workload& w, const workloads::Program& program, int64_t rank);

}  // namespace paratwin::exec
