#pragma once
// Collective algorithms as per-member step plans, the way an MPI or NCCL rank runs them: at each
// step a member sends some bytes to some peers and receives from others, and the step ends when its
// sends and receives are done. `exact` fidelity has one step per algorithm step; `fast` aggregates a
// ring's steps into one transfer with the same bytes per link and adds the skipped steps' latency.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::sim {

enum class Fidelity { exact, fast };
enum class Algorithm { ring, binomial_tree, pairwise };

struct Transfer {
  int32_t peer = 0;  // index in the group
  double bytes = 0;
};

struct Step {
  std::vector<Transfer> sends;
  std::vector<Transfer> recvs;
  int extra_latencies = 0;  // path latencies to add after the step (fast fidelity)
  double reduce_bytes = 0;  // received bytes this member reduces into its buffer at the end of the step
};

const char* to_string(Algorithm a);
// The algorithm a library uses for a collective kind (ring for all-reduce, reduce-scatter and
// all-gather; binomial trees for broadcast and reduce; pairwise exchange for all-to-all).
Algorithm default_algorithm(workloads::OpKind kind);

// Member `me` of a group of `size`: its steps for a collective whose buffer is `bytes` (the
// nccl-tests size: all-gather output, reduce-scatter input), rooted at `root` for broadcast/reduce.
std::vector<Step> plan(workloads::OpKind kind, Algorithm algorithm, int32_t size, int32_t me, double bytes,
                       int32_t root, Fidelity fidelity);

}  // namespace paratwin::sim
