#include "sim/run_estimate.hpp"

#include <unistd.h>

#include <cstdio>
#include <map>

#include "sim/engine_state.hpp"
#include "topology/platform.hpp"

namespace paratwin::sim {

namespace {

// Wall-clock seconds per step, and per step and actor in flight (see estimate_run).
// Fitted through the smallest and largest runs of each table column (exact: 64 ranks 4.3 s for 356,224
// steps, 1,024 ranks 728 s for 6,133,760; fast: 64 ranks 0.78 s for 64,768, 2,048 ranks 237 s for
// 2,940,928); the runs between come out 0.6-1.7 times their measured times.
constexpr double kExactSecondsPerStep = 5.0e-6, kExactSecondsPerStepActor = 1.1e-7;
constexpr double kFastSecondsPerStep = 9.8e-6, kFastSecondsPerStepActor = 3.5e-8;

// The process's address space now (/proc/self/statm, first field in pages); 0 where unreadable.
double address_space_now() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0;
  const int read = std::fscanf(f, "%lu", &pages);
  std::fclose(f);
  return read == 1 ? static_cast<double>(pages) * static_cast<double>(::sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace

RunEstimate estimate_run(detail::EngineState& st) {
  const auto& p = st.program;
  RunEstimate e;
  // One actor of each role stands for the role's others: their op lists are the same and their groups
  // the same sizes, so their collectives take the same number of steps.
  std::map<int, int64_t> actors_of_role, sample_of_role;
  for (int64_t r = 0; r < p.grid.size(); ++r) {
    if (st.fold.active && st.fold.rep[static_cast<size_t>(r)] != r) continue;
    const int role = p.role_of(r);
    if (actors_of_role[role]++ == 0) sample_of_role[role] = r;
    ++e.actors;
  }
  if (!st.options.free_communication)
    for (const auto& [role, rank] : sample_of_role) {
      double steps = 0;
      for (const workloads::Op& op : p.roles[static_cast<size_t>(role)].ops) {
        if (workloads::is_p2p(op.kind)) {
          steps += 1;
          continue;
        }
        if (!workloads::is_collective(op.kind)) continue;
        if (st.node_collectives && st.node_collectives->on_node(rank, op.group)) continue;  // timed analytically
        const GroupLayout& layout = st.layouts.of(rank, op.group);
        const Algorithm algorithm = st.tuner.choose(op.kind, layout, op.bytes);
        const auto me = static_cast<int32_t>(p.grid.index_in_group(rank, op.group));
        steps += static_cast<double>(
            st.step_costs.plan(op.kind, algorithm, layout, me, op.bytes, op.root, st.options.fidelity).size());
      }
      e.steps += steps * static_cast<double>(actors_of_role[role]);
    }
  // Address space: what is built now (program, platform, layouts) plus each actor's stack and its own
  // state (walker, flights, mailboxes, SimGrid's actor and context): about 100 KiB measured per actor
  // on the GPT-80B Frontier workloads at 64 to 512 ranks; 128 KiB with a margin.
  const double actor_bytes = 1024.0 * (topology::kActorStackKiB + 128);
  e.memory_bytes = address_space_now() + static_cast<double>(e.actors) * actor_bytes;
  // Wall-clock: every step is a SimGrid activity whose completion costs more the more activities are
  // in flight (SimGrid 3.32 walks a list of them, [simgrid-repo]), so seconds ≈ steps ×
  // (a + b × actors). a, b fitted on GPT-80B Frontier runs (64 to 1,024 ranks exact, 64 to 2,048 fast,
  // the timings in sim/README.md, on an idle 2-core machine); a rough figure, within a factor of 2 there.
  const bool fast = st.options.fidelity == Fidelity::fast;
  const double a = fast ? kFastSecondsPerStep : kExactSecondsPerStep;
  const double b = fast ? kFastSecondsPerStepActor : kExactSecondsPerStepActor;
  e.seconds = e.steps * (a + b * static_cast<double>(e.actors));
  return e;
}

}  // namespace paratwin::sim
