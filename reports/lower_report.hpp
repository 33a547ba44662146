#pragma once
// What `paratwin lower` reports about a Program: per role, op counts by kind, FLOPs, bytes per
// collective kind and group axis, and memory per rank — as data, JSON and text.
#include <array>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::reports {

struct CollectiveStat {
  workloads::OpKind kind = workloads::OpKind::all_reduce;
  std::string group;  // axis names, e.g. "z" or "expert+data"
  int64_t group_size = 1;
  int64_t count = 0;
  double bytes = 0;  // summed buffer sizes (nccl-tests convention)
};

struct RoleSummary {
  std::string name;
  int64_t stage = 0;
  int64_t ranks = 0;
  std::array<int64_t, workloads::kOpKinds> op_counts{};
  std::array<double, workloads::kPhases> flops_by_phase{};
  double gemm_flops = 0;
  double compute_flops = 0;
  std::vector<CollectiveStat> collectives;
  int64_t messages = 0;  // sends
  double message_bytes = 0;
  double params = 0;
  workloads::MemoryEstimate memory;
};

struct ProgramSummary {
  std::string workload;
  std::string stack;  // workloads::stack_label of the program's framework
  std::string description;
  int64_t ranks = 0;
  std::vector<workloads::Axis> axes;
  int64_t micro_batches = 0;
  int64_t tokens_per_iteration = 0;
  double parameters = 0;
  double model_flops = 0, hardware_flops = 0;  // the program's (no recomputation; with it)
  double executed_gemm_flops = 0;              // GEMM FLOPs summed over every rank
  std::vector<RoleSummary> roles;
};

ProgramSummary summarize(const workloads::Program& p);
// Bytes with a binary prefix and three significant digits: "1.5 GiB".
std::string bytes_text(double bytes);
nlohmann::json to_json(const ProgramSummary& s, std::optional<double> device_memory_bytes);
// `only_role`: print just that role (the role of the rank asked for), or all when negative.
std::string format_text(const ProgramSummary& s, std::optional<double> device_memory_bytes, int64_t only_role = -1);

}  // namespace paratwin::reports
