#pragma once
// Which layers each virtual pipeline stage holds: an even split, or Megatron-Core's uneven ones (first
// and last stages of their own sizes, or the embedding and the loss counted as layers).
#include <cstdint>
#include <vector>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

// starts[v] is the first layer of virtual stage v (chunk c of stage s is v = c·stages + s, the order
// layers are assigned in), starts[stages·chunks] = model.layers. Throws WorkloadError naming the field
// when the layers cannot be split so, or a model chunk would hold no layer.
std::vector<int64_t> virtual_stage_starts(const Workload& w);

// Whether the layer at `index_in_chunk` of its model chunk recomputes its forward pass in backward:
// full checkpointing, and the layer among the chunk's first training.recompute_num_layers (all of them
// when that is 0).
bool recomputes(const TrainingConfig& t, int64_t index_in_chunk);
// For every layer of the model, whether it recomputes.
std::vector<bool> recomputed_layers(const Workload& w);

}  // namespace paratwin::workloads
