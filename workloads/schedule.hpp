#pragma once
// Pipeline schedules: the order in which one stage runs the forward and backward passes of its
// micro-batches (and model chunks). [narayanan2021megatron] §2.2 (GPipe, 1F1B, interleaved 1F1B) and [singh2022axonn]
// (AxoNN's message-driven schedule with a pipeline limit).
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

struct Slot {
  bool forward = true;
  int32_t micro_batch = 0;
  int32_t chunk = 0;
  bool operator==(const Slot&) const = default;
};

struct ScheduleSpec {
  Schedule kind = Schedule::one_f_one_b;
  int64_t stages = 1;
  int64_t micro_batches = 1;
  int64_t chunks = 1;
  int64_t pipeline_limit = 0;  // axonn; 0 = stages
};

// The slots of `stage`, in execution order. Every (micro-batch, chunk) appears once forward and
// once backward.
std::vector<Slot> stage_schedule(const ScheduleSpec& spec, int64_t stage);
std::vector<std::vector<Slot>> all_stage_schedules(const ScheduleSpec& spec);

// "F1 F2 B1 ..." (1-based micro-batches as in the paper's figures; chunk as a/b/c... when chunks > 1).
std::string describe(const std::vector<Slot>& slots, int64_t chunks);

}  // namespace paratwin::workloads
