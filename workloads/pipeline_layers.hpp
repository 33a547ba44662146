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

// Whether `layer` recomputes its forward pass in backward: full checkpointing, and the layer among the
// first training.recompute_num_layers of its model chunk (all of them when that is 0).
bool layer_recomputed(const Workload& w, int64_t layer);
// How many of the model's layers do.
int64_t recomputed_layers(const Workload& w);

}  // namespace paratwin::workloads
