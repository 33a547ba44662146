#pragma once
// `paratwin search` from its options to its outputs: the inputs checked before anything slow, every
// configuration ranked by the analytical model (sim::search), the best simulated with SimGrid and
// re-ranked, the heading and the ranking table printed, the JSON document and the emitted workloads
// written.
#include <cstdint>
#include <string>
#include <vector>

namespace paratwin::predict {

struct SearchRun {
  std::string workload;
  std::string machine = "frontier";
  int64_t gpus = 0;
  std::string family = "all";
  int64_t top = 10;
  int64_t simulate = 3;
  std::string fidelity = "auto";
  bool fold = false;
  std::vector<std::string> algorithms;
  bool no_progress = false;
  std::string library;
  std::string json;
  bool placement_agnostic = false;
  bool show_rejected = false;
  std::string emit;
  bool emit_all = false;
  std::vector<std::string> vary{"all"};
  bool exhaustive = false;
};

// Whether any configuration ranked (none: the search printed why, wrote its JSON and emitted nothing).
// Throws InputError naming the option at fault.
bool run_search(const SearchRun& a);

}  // namespace paratwin::predict
