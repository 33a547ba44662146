#pragma once
// What `paratwin lower` lists per rank role: every collective a rank issues in one iteration with its
// size, grouped into rows of equal kind, name, phase, group and size (the layers they serve are
// collapsed into ranges). By default only the all-gathers and reduce-scatters of sharded weights and
// gradients (ZeRO-3 / FSDP gathers and reduce-scatters, ZeRO-1/2's, AxoNN's z axis: streams shard and
// data), which is what tells one stack's sharding mechanism from another's.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::reports {

struct ListedCollective {
  workloads::OpKind kind = workloads::OpKind::all_gather;
  std::string name;
  workloads::Phase phase = workloads::Phase::forward;
  std::string layers;  // "0-11", "3,7", "embedding", "-"
  std::string group;   // axis names
  int64_t group_size = 1;
  int64_t count = 0;  // calls per iteration
  double bytes = 0;   // each (nccl-tests convention: all-gather output, reduce-scatter input)
  double total() const { return bytes * static_cast<double>(count); }
};

// `every`: all collectives of the role; otherwise the all-gathers and reduce-scatters of sharded
// weights and gradients.
std::vector<ListedCollective> list_collectives(const workloads::Program& p, const workloads::Role& r, bool every);
// The tables of every role (or of `only_role`), with totals per kind; empty when no role has one.
std::string format_collective_listing(const workloads::Program& p, int64_t only_role, bool every);
nlohmann::json collective_listing_json(const workloads::Program& p, bool every);

}  // namespace paratwin::reports
