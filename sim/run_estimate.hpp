#pragma once
// What a simulation will cost before its actors exist: the actors, the steps they go through, the
// address space they reserve and the wall-clock time, so that a run that cannot fit (8,192 actors once
// reserved 64 GiB of stacks) or would take hours is named before it starts.
#include <cstdint>

namespace paratwin::sim {

namespace detail {
struct EngineState;
}

struct RunEstimate {
  int64_t actors = 0;
  double steps = 0;         // collective steps and pipeline messages, summed over the actors
  double memory_bytes = 0;  // the process's address space at its peak, about
  double seconds = 0;       // wall-clock time of the run, about (see run_estimate.cpp)
};

// From the engine's state once built (platform, layouts, tuner, folding), before any actor starts.
RunEstimate estimate_run(detail::EngineState& state);

}  // namespace paratwin::sim
