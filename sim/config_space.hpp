#pragma once
// The configurations a search considers: every way to split N GPUs among a family's parallel axes,
// applied to a base workload (its model, batch and training settings kept).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/search.hpp"

namespace paratwin::sim {

struct Configuration {
  Family family = Family::four_d;
  std::string label;
  workloads::Workload workload;
};

// Whether a family can train the base workload's model: 4-D (AxoNN) dense models only, TED MoE
// models only, PTD-P both.
bool applies(Family family, const workloads::Workload& base);

// Every configuration of `family` on `gpus` GPUs, in a fixed order:
// - 4d: G_x·G_y·G_z·G_data = N, no pipeline (seed 002 ch. 5);
// - ptdp: t·p·d = N with Megatron tensor parallelism t, p pipeline stages (the base's schedule when it
//   has one, else 1F1B) and micro-batch sizes 1, 2, 4, 8 (seed 003 §3);
// - ted: G_tensor·G_expert·G_data = N (seed 002 ch. 7).
// Optimisations of the base that a configuration cannot use are switched off (e.g. ORS without
// sharded weights). Configurations may still break a rule of the format; search() validates them.
std::vector<Configuration> configurations(const workloads::Workload& base, Family family, int64_t gpus);

}  // namespace paratwin::sim
