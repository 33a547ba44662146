// Benchmark: the executor's own cost on one rank of the CPU backend. Runs a 1-rank workload,
// then reports the iteration time against the sum of its ops' times (executor overhead) and of its GEMM
// times, and the GEMMs' rate inside the executor against the same shapes timed alone with the BLAS
// (best of 5). Run: mpirun -np 1 build/bench/bench_exec [WORKLOAD...] (default: two built-in shapes).
#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "exec/backend.hpp"
#include "exec/executor.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;

namespace {

pw::Workload one_rank(int64_t hidden, int64_t layers, int64_t seq, int64_t micro_batch) {
  nlohmann::json j = {
      {"name", "bench-h" + std::to_string(hidden)},
      {"model", {{"layers", layers}, {"hidden", hidden}, {"heads", hidden / 64}, {"seq_len", seq}, {"vocab", 8192}}},
      {"training", {{"global_batch", 2 * micro_batch}, {"micro_batch", micro_batch}, {"dtype", "fp32"}}}};
  return pw::parse_workload(j, "bench");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The best of five runs of one GEMM op's BLAS calls, alone.
double blas_alone(const pw::GemmShape& g, std::vector<float>& a, std::vector<float>& b, std::vector<float>& c) {
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < g.batch; ++i)
      cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                  1.0f, a.data() + i * g.m * g.k, g.trans_a ? m : k, b.data() + i * g.k * g.n, g.trans_b ? k : n, 0.0f,
                  c.data() + i * g.m * g.n, n);
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  std::vector<pw::Workload> workloads;
  for (int i = 1; i < argc; ++i) workloads.push_back(pw::load_workload_file(argv[i]));
  if (workloads.empty()) workloads = {one_rank(512, 2, 256, 2), one_rank(1024, 2, 512, 2)};
  std::printf("%-14s %6s %12s %12s %12s %10s %10s %12s\n", "workload", "ops", "iteration", "sum of ops", "sum GEMMs",
              "overhead", "non-GEMM", "GEMM rate");
  for (const auto& w : workloads) {
    const auto program = pw::lower(w);
    if (program.grid.size() != 1) {
      std::fprintf(stderr, "%s: %lld ranks; this benchmark runs one\n", w.name.c_str(),
                   static_cast<long long>(program.grid.size()));
      continue;
    }
    auto backend = paratwin::exec::make_backend("cpu");
    backend->prepare(program, 0);
    paratwin::exec::ExecOptions options;
    options.iterations = 3;
    options.warmup = 1;
    const auto r = paratwin::exec::run_rank(program, 0, *backend, options);
    const auto& role = program.roles[0];
    double ops = 0, gemms = 0, in_executor = 0, alone = 0;
    int64_t a = 1, b = 1, c = 1;
    for (const auto& op : role.ops)
      if (op.kind == pw::OpKind::gemm) {
        a = std::max(a, op.gemm.batch * op.gemm.m * op.gemm.k);
        b = std::max(b, op.gemm.batch * op.gemm.k * op.gemm.n);
        c = std::max(c, op.gemm.batch * op.gemm.m * op.gemm.n);
      }
    std::vector<float> A(static_cast<size_t>(a), 1e-3f), B(static_cast<size_t>(b), 1e-3f), C(static_cast<size_t>(c));
    std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, bool, bool>, double> best;  // by shape
    for (const auto& e : r.events) {
      const auto& op = role.ops[e.op];
      if (op.stream != pw::Stream::compute) continue;
      ops += e.end - e.start;
      if (op.kind != pw::OpKind::gemm) continue;
      gemms += e.end - e.start;
      in_executor += e.end - e.start;
      const auto& g = op.gemm;
      const auto key = std::make_tuple(g.m, g.n, g.k, g.batch, g.trans_a, g.trans_b);
      auto it = best.find(key);
      if (it == best.end()) it = best.emplace(key, blas_alone(g, A, B, C)).first;
      alone += it->second;
    }
    const double T = r.iterations.back();  // the iteration whose ops were recorded
    std::printf("%-14s %6zu %10.4g s %10.4g s %10.4g s %9.2f%% %9.1f%% %11.1f%%\n", w.name.c_str(), role.ops.size(), T,
                ops, gemms, 100 * (T - ops) / T, 100 * (T - gemms) / T, 100 * alone / in_executor);
  }
  std::printf(
      "overhead: iteration minus the sum of its ops' times; non-GEMM: iteration minus its GEMMs' times;\n"
      "GEMM rate: the executor's GEMMs against the same shapes run alone with the BLAS (best of 5)\n");
  MPI_Finalize();
  return 0;
}
