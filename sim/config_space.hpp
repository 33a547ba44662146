#pragma once
// The configurations a search considers: every way to split N GPUs among a family's parallel axes,
// applied to a base workload (its model, batch and training settings kept), with the micro-batch and
// pipeline chunks as part of a configuration, and the settings that only trade memory for time
// (recomputation, ZeRO stage, sequence parallelism; the micro-batch without a pipeline) as variants
// of it, of which the search keeps the fastest that fits.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/search.hpp"

namespace paratwin::sim {

// One variant's memory-for-time settings.
struct Knobs {
  workloads::Checkpointing checkpointing = workloads::Checkpointing::full;
  int64_t zero = 0;
  bool sequence_parallel = false;
  int64_t micro_batch = 1;
};

struct Configuration {
  Family family = Family::four_d;
  std::string axes;              // "x4 y2 z8 d128", "t8 p16 d8", "t2 e16 d2"
  workloads::Workload workload;  // the parallelism, micro-batch and schedule set; knobs applied by with()
  // Every variant, the one expected fastest first (largest micro-batch, least recomputation, ZeRO 1, 2,
  // 0, 3, sequence parallelism off): ties in estimated time go to the earlier one.
  std::vector<Knobs> variants;
  // No pipeline: the micro-batch only splits gradient accumulation, so it is a knob (a larger one is
  // taken to be no slower); with a pipeline it changes the bubble and is part of the configuration.
  bool micro_batch_is_knob = false;

  workloads::Workload with(const Knobs& k) const;  // the workload of one variant, optimisations fitted
  std::string label(const Knobs& k) const;         // "t8 p16 d8 mb1 v3 sp sel zero1"
};

// Whether a family can train the base workload's model: 4-D (AxoNN) dense models only, TED MoE
// models only, PTD-P both.
bool applies(Family family, const workloads::Workload& base);

// Every configuration of `family` on `gpus` GPUs, in a fixed order:
// - 4d: G_x·G_y·G_z·G_data = N, no pipeline ([singh2025dissertation] ch. 5);
// - ptdp: t·p·d = N with Megatron tensor parallelism t and p pipeline stages ([narayanan2021megatron] §3); with p > 1,
//   each micro-batch size and, for each, v = 1 (the base's schedule when it has a non-interleaved one,
//   else 1F1B) and every v > 1 with p·v | layers (interleaved);
// - ted: G_tensor·G_expert·G_data = N ([singh2025dissertation] ch. 7).
// Micro-batch sizes: the powers of two up to max(8, the base's) (and the base's) that split each
// replica's share of the batch. A dimension `vary` leaves out keeps the base's value where it applies.
// Optimisations of the base that a variant cannot use are switched off (e.g. ORS without sharded
// weights). Variants may still break a rule of the format; search() validates them.
std::vector<Configuration> configurations(const workloads::Workload& base, Family family, int64_t gpus,
                                          const Vary& vary = {});

// Whether variant `a` is taken to be no slower than `b` of the same configuration: the same sequence
// parallelism, no more recomputation, both ZeRO 0, both 3, or both in 1-2 with a stage no higher (2
// runs the steps of 1 and only saves memory; 3 adds weight gathers but overlaps its gradient
// reduce-scatters with the backward pass), and without a pipeline a micro-batch no smaller.
bool no_slower(const Configuration& c, const Knobs& a, const Knobs& b);
// Whether variant `a` is taken to need no more memory than `b`: at least as much recomputation, a ZeRO
// stage and sequence parallelism at least as high, a micro-batch no larger.
bool no_larger(const Knobs& a, const Knobs& b);

}  // namespace paratwin::sim
