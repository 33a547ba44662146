// The executor under mpirun (ctest runs this binary with -np 2 and -np 4): every scaled-down workload
// whose rank count is the job's runs on the CPU backend; its trace holds every op of every rank once,
// each op starts after its dependencies end and after the op before it on its stream; and with the
// overlap options, communication runs while the same rank computes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "exec/backend.hpp"
#include "exec/executor.hpp"
#include "exec/verify.hpp"
#include "exec/watchdog.hpp"
#include "workloads/lower.hpp"
#include "workloads/op_walker.hpp"

namespace pw = paratwin::workloads;
namespace px = paratwin::exec;

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The scaled-down workloads of the executor tests that run on `ranks` ranks.
std::vector<std::string> workloads_for(int ranks) {
  std::vector<std::string> files;
  for (const char* dir : {PARATWIN_EXAMPLES_DIR, PARATWIN_EXEC_WORKLOADS_DIR})
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("tiny-", 0) != 0) continue;
      if (pw::lower(pw::load_workload_file(entry.path().string())).grid.size() == ranks)
        files.push_back(entry.path().string());
    }
  std::sort(files.begin(), files.end());
  return files;
}

// Every rank's events, gathered on rank 0 (other ranks get an empty list).
std::vector<pw::OpEvent> gather(const std::vector<pw::OpEvent>& mine) {
  std::vector<double> flat;
  for (const auto& e : mine)
    flat.insert(flat.end(), {static_cast<double>(e.rank), static_cast<double>(e.op), e.start, e.end});
  const int count = static_cast<int>(flat.size());
  std::vector<int> counts(static_cast<size_t>(world_size())), offsets(counts.size() + 1, 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<double> all(static_cast<size_t>(offsets.back()));
  MPI_Gatherv(flat.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<pw::OpEvent> out;
  for (size_t k = 0; world_rank() == 0 && k + 3 < all.size(); k += 4)
    out.push_back({static_cast<int64_t>(all[k]), static_cast<uint32_t>(all[k + 1]), all[k + 2], all[k + 3]});
  return out;
}

// One measured iteration of `program` on this rank with the CPU backend, watched by a watchdog that
// must stay quiet: it is told every barrier, iteration and wait.
px::RankResult run_cpu(const pw::Program& program, int warmup) {
  std::atomic<bool> expired{false};
  std::string said;
  px::Watchdog watchdog(program, world_rank(), 120, [&](const std::string& m) {
    said = m;
    expired = true;
  });
  auto backend = px::make_backend("cpu");
  backend->prepare(program, world_rank());
  px::ExecOptions options;
  options.iterations = 1;
  options.warmup = warmup;
  auto result = px::run_rank(program, world_rank(), *backend, options, &watchdog);
  EXPECT_FALSE(expired.load()) << said;
  return result;
}

TEST(Executor, ScaledDownWorkloadsRunEveryOpInDependencyOrder) {
  const auto files = workloads_for(world_size());
  ASSERT_FALSE(files.empty()) << "no tiny workload has " << world_size() << " ranks";
  for (const auto& file : files) {
    const auto program = pw::lower(pw::load_workload_file(file));
    const auto result = run_cpu(program, 0);
    ASSERT_EQ(result.iterations.size(), 1u);
    EXPECT_GT(result.iterations[0], 0) << file;
    // The breakdown is the op walker's ledger: replaying this rank's events gives it back.
    const auto& mine = program.roles[static_cast<size_t>(program.role_of(world_rank()))];
    const auto replayed = pw::replay_ledger(mine, result.events, 0, result.iterations[0]);
    const auto& b = result.breakdown;
    const double slack = 1e-7 * result.iterations[0];
    EXPECT_NEAR(replayed.compute, b.compute, slack) << file;
    EXPECT_NEAR(replayed.exposed_comm, b.exposed_comm, slack) << file;
    EXPECT_NEAR(replayed.bubble, b.bubble, slack) << file;
    EXPECT_NEAR(replayed.other_idle, b.other_idle, slack) << file;
    EXPECT_NEAR(b.compute + b.exposed_comm + b.bubble + b.other_idle, result.iterations[0], slack) << file;
    std::printf("rank %d %s: compute %.4g exposed %.4g bubble %.4g other %.4g; replayed %.4g %.4g %.4g %.4g\n",
                world_rank(), file.c_str(), b.compute, b.exposed_comm, b.bubble, b.other_idle, replayed.compute,
                replayed.exposed_comm, replayed.bubble, replayed.other_idle);
    const auto events = gather(result.events);
    if (world_rank() != 0) continue;
    std::map<std::pair<int64_t, uint32_t>, pw::OpEvent> by_op;
    for (const auto& e : events)
      EXPECT_TRUE(by_op.emplace(std::make_pair(e.rank, e.op), e).second) << file << ": op twice";
    for (int64_t r = 0; r < program.grid.size(); ++r) {
      const auto& role = program.roles[static_cast<size_t>(program.role_of(r))];
      std::map<int, double> stream_end;
      for (uint32_t i = 0; i < role.ops.size(); ++i) {
        const auto it = by_op.find({r, i});
        ASSERT_NE(it, by_op.end()) << file << ": rank " << r << " op " << i << " (" << role.ops[i].name << ") missing";
        const auto& e = it->second;
        EXPECT_LE(e.start, e.end) << file;
        const auto& op = role.ops[i];
        const uint32_t* d = role.deps_of(op);
        for (uint32_t k = 0; k < op.dep_count; ++k)
          EXPECT_GE(e.start, by_op.at({r, d[k]}).end) << file << ": rank " << r << " op " << i << " (" << op.name
                                                      << ") started before its dependency " << d[k] << " ended";
        const int s = static_cast<int>(op.stream);
        if (stream_end.count(s)) {
          EXPECT_GE(e.start, stream_end[s]) << file << ": rank " << r << " op " << i << " overtook its stream";
        }
        stream_end[s] = e.end;
      }
    }
    std::printf("%s: %lld ranks, %zu ops measured, iteration %.4g s\n", file.c_str(),
                static_cast<long long>(program.grid.size()), events.size(), result.iterations[0]);
  }
}

// "cuda" is a plugin: a build with it loads it (here from a file that is missing: BackendUnavailable,
// naming the file); a build without it names the backends it has.
TEST(Backends, CudaIsAPluginOrNotBuilt) {
  const auto names = px::backend_names();
  if (std::find(names.begin(), names.end(), "cuda") == names.end()) {
    try {
      px::make_backend("cuda");
      ADD_FAILURE() << "a build without CUDA made a cuda backend";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("(available: cpu)"), std::string::npos) << e.what();
    }
    return;
  }
  const char* before = std::getenv(px::kCudaPluginEnv);
  const std::string saved = before ? before : "";
  setenv(px::kCudaPluginEnv, "/nonexistent/libparatwin_cuda.so", 1);
  try {
    px::make_backend("cuda");
    ADD_FAILURE() << "a missing plugin made a cuda backend";
  } catch (const px::BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libparatwin_cuda.so does not exist"), std::string::npos)
        << e.what();
  }
  if (before)
    setenv(px::kCudaPluginEnv, saved.c_str(), 1);
  else
    unsetenv(px::kCudaPluginEnv);
}

// OAR/ORS/OAG: a collective issued on a communication stream runs while the same rank computes.
TEST(Executor, OverlappedCommunicationIntersectsCompute) {
  if (world_size() != 4) GTEST_SKIP() << "the 3-D workloads need 4 ranks";
  const auto program =
      pw::lower(pw::load_workload_file(std::string(PARATWIN_EXEC_WORKLOADS_DIR) + "/tiny-3d-1x2x2.json"));
  const auto result = run_cpu(program, 1);
  const auto& role = program.roles[static_cast<size_t>(program.role_of(world_rank()))];
  double overlapped = 0;  // seconds of communication that ran under compute on this rank
  for (const auto& c : result.events) {
    const auto& op = role.ops[c.op];
    if (!pw::is_collective(op.kind)) continue;
    for (const auto& g : result.events)
      if (role.ops[g.op].kind == pw::OpKind::gemm)
        overlapped += std::max(0.0, std::min(c.end, g.end) - std::max(c.start, g.start));
  }
  double total = 0;
  MPI_Allreduce(&overlapped, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank() == 0) std::printf("communication under GEMMs: %.4g s over 4 ranks\n", total);
  EXPECT_GT(total, 0) << "no collective ran while a GEMM ran";
}

// The modelled stack's host work (Op::host_seconds: pipeline-engine instructions) is not a kernel: the
// executor ends it as it starts. A second per instruction would make the iteration last 32 s.
TEST(Executor, SkipsTheStacksHostWork) {
  if (world_size() != 2) GTEST_SKIP() << "the pipeline example has 2 ranks";
  auto w = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/tiny-pp-1f1b.json");
  w.framework.micro_batch_overhead = 1.0;
  const auto program = pw::lower(w);
  const auto& role = program.roles[static_cast<size_t>(program.role_of(world_rank()))];
  int host = 0;
  for (const auto& op : role.ops) host += op.host_seconds > 0 ? 1 : 0;
  ASSERT_GT(host, 0);
  const auto result = run_cpu(program, 0);
  ASSERT_EQ(result.iterations.size(), 1u);
  EXPECT_LT(result.iterations[0], 0.5 * host);
  EXPECT_EQ(result.events.size(), role.ops.size());  // every op ran, the host work included
  // No backend ran the host work: it ended as it started.
  for (const auto& e : result.events) {
    if (role.ops[e.op].host_seconds > 0) {
      EXPECT_EQ(e.start, e.end) << role.ops[e.op].name;
    }
  }
}

// Verify mode passes on every scaled-down workload it covers, and fails when the Program is wrong.
TEST(Verify, DistributedLayersEqualTheSingleRankReference) {
  int covered = 0;
  for (const auto& file : workloads_for(world_size())) {
    const auto w = pw::load_workload_file(file);
    const auto program = pw::lower(w);
    const auto checks = px::verify(w, program, world_rank());
    covered += checks.empty() ? 0 : 1;
    for (const auto& c : checks) {
      EXPECT_TRUE(c.ok()) << file << ": " << c.what << ": error " << c.error << " " << c.problem;
      if (world_rank() == 0) std::printf("%s: %s: %.2e\n", file.c_str(), c.what.c_str(), c.error);
    }
  }
  EXPECT_GT(covered, 0);
}

// The checks verify runs on `file`'s Program after `mutate` has broken every op it returns true for.
std::vector<px::Check> broken(const std::string& file, const std::function<bool(pw::Op&, const pw::Grid&)>& mutate) {
  const auto w = pw::load_workload_file(file);
  auto program = pw::lower(w);
  int changed = 0;
  for (auto& op : program.roles[0].ops) changed += mutate(op, program.grid) ? 1 : 0;
  EXPECT_GT(changed, 0) << file << ": the mutation matched no op";
  return px::verify(w, program, world_rank());
}

// The first check whose name starts with `prefix` fails.
void fails(const std::vector<px::Check>& checks, const std::string& prefix, const std::string& problem = "") {
  const auto it =
      std::find_if(checks.begin(), checks.end(), [&](const px::Check& c) { return c.what.rfind(prefix, 0) == 0; });
  ASSERT_NE(it, checks.end()) << "no check " << prefix;
  EXPECT_FALSE(it->ok()) << it->what;
  if (!problem.empty()) {
    EXPECT_NE(it->problem.find(problem), std::string::npos) << it->problem;
  }
}

TEST(Verify, AWrongLoweringFails) {
  if (world_size() != 4) GTEST_SKIP() << "the 1-D and 3-D workloads need 4 ranks";
  const std::string ex = PARATWIN_EXAMPLES_DIR, exw = PARATWIN_EXEC_WORKLOADS_DIR;
  const auto named = [](const pw::Op& op, const char* name) { return std::string(op.name) == name; };
  // fc1 computing twice the columns it should: the shapes no longer describe the layer.
  fails(broken(ex + "/tiny-tp1d.json",
               [&](pw::Op& op, const pw::Grid&) { return named(op, "fc1") && (op.gemm.n *= 2, true); }),
        "1-D MLP", "fc1 computes");
  // The attention's output all-reduce of half its size.
  fails(broken(ex + "/tiny-tp1d.json",
               [&](pw::Op& op, const pw::Grid&) { return named(op, "proj.all_reduce") && (op.bytes /= 2, true); }),
        "1-D attention");
  // A 3-D weight gradient reduce-scattered over the wrong axis (y instead of z).
  fails(broken(exw + "/tiny-3d-1x2x2.json",
               [&](pw::Op& op, const pw::Grid& g) {
                 return named(op, "qkv.wgrad.reduce_scatter_z") && (op.group = g.mask("y"), true);
               }),
        "3-D FC qkv");
  // Experts exchanged over the tensor group instead of the expert group.
  fails(broken(ex + "/tiny-moe-ted.json",
               [&](pw::Op& op, const pw::Grid& g) {
                 return op.kind == pw::OpKind::all_to_all && (op.group = g.mask("tensor"), true);
               }),
        "MoE");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints; every rank runs every test (they are collective).
  if (world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
