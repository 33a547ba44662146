#pragma once
// A 4-D (AxoNN) GPT workload on Frontier-like nodes of 8 GCDs: x·y·z inside a node when their product is
// 8, data-parallel replicas on other nodes. Small enough to simulate every rank in a test.
#include <nlohmann/json.hpp>

#include "workloads/lower.hpp"

namespace paratwin::test {

inline workloads::Program four_d(int64_t x, int64_t y, int64_t z, int64_t data, bool overlap) {
  nlohmann::json j = {
      {"name", "four-d"},
      {"model", {{"layers", 4}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 51200}}},
      {"training", {{"global_batch", 4 * data}, {"micro_batch", 4}, {"dtype", "bf16"}, {"checkpointing", "full"}}},
      {"parallelism", {{"data", {{"size", data}}}, {"tensor", {{"mode", "axonn"}, {"x", x}, {"y", y}, {"z", z}}}}},
      {"placement", {{"order", {"x", "y", "z", "pipe", "data"}}, {"devices_per_node", 8}}}};
  if (overlap)
    j["optimizations"] = {{"overlap_all_reduce", true}, {"overlap_reduce_scatter", true}, {"overlap_all_gather", true}};
  return workloads::lower(workloads::parse_workload(j, "four-d"));
}

}  // namespace paratwin::test
