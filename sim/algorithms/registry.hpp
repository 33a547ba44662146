#pragma once
// The collective algorithms, registered in one list, as SimGrid registers its own (src/smpi/colls/).
// Each has one file in sim/algorithms/ that defines `AlgorithmSpec NAME_algorithm()` (sim/collectives.hpp):
// the kinds it runs, its step plan, how the analytical model loads the network with its flows, and what
// NCCL's tuning model calls it. Adding an algorithm is its file and one line here (CONTRIBUTING.md, "Add a
// collective algorithm"); tests/sim/registry_test.cpp checks every entry against the step planner and
// the analytical model.
#define PARATWIN_COLLECTIVE_ALGORITHMS(X) \
  X(ring)                                 \
  X(recursive)                            \
  X(tree)                                 \
  X(hierarchical)                         \
  X(binomial_tree)                        \
  X(pairwise)                             \
  X(direct)                               \
  X(pat)
