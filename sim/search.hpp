#pragma once
// Configuration search: every valid configuration of the chosen families for N GPUs, filtered by the
// memory model, ranked by the analytical model.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/analytical_model.hpp"

namespace paratwin::sim {

enum class Family { four_d, ptdp, ted };
const char* to_string(Family f);  // "4d", "ptdp", "ted"

struct SearchOptions {
  int64_t gpus = 0;
  std::vector<Family> families;  // empty: every family that applies to the model
  AnalyticalOptions model;
};

struct Candidate {
  Family family = Family::four_d;
  std::string label;             // e.g. "x=4 y=2 z=2 data=2 mb=8"
  workloads::Workload workload;  // the base workload with this configuration
  AnalyticalEstimate estimate;
};

struct Rejected {
  Family family = Family::four_d;
  std::string label;
  std::string reason;  // e.g. "needs 52.3 GiB per GPU, the device has 40 GiB"
};

struct SearchResult {
  std::vector<Candidate> ranked;   // fastest first; ties broken by label (deterministic)
  std::vector<Rejected> rejected;  // valid, but do not fit in memory
  std::vector<Rejected> invalid;   // break a rule of the workload format (e.g. x does not divide the heads)
  int64_t enumerated = 0;          // valid configurations before the memory filter
};

// `topology` must cover at least options.gpus devices. Throws std::invalid_argument when no family
// applies (e.g. TED for a dense model) or gpus is not positive.
SearchResult search(const workloads::Workload& base, const topology::Topology& topology, const SearchOptions& options);

}  // namespace paratwin::sim
