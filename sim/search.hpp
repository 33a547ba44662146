#pragma once
// Configuration search: every valid configuration of the chosen families for N GPUs, filtered by the
// memory model, ranked by the analytical model.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/analytical_model.hpp"

namespace paratwin::sim {

enum class Family { four_d, ptdp, ted };
const char* to_string(Family f);  // "4d", "ptdp", "ted"

// The dimensions a search varies beyond the family's parallel axes (each where it applies); one left
// out keeps the base workload's value.
struct Vary {
  bool micro_batch = true;        // powers of two up to max(8, the base's)
  bool chunks = true;             // PTD-P with p > 1: interleaved schedule with v chunks, p·v | layers
  bool sequence_parallel = true;  // Megatron tensor parallelism t > 1
  bool checkpointing = true;      // none, selective, full
  bool zero = true;               // 0 to 3 with more than one batch replica (axonn: up to 2)
  // PTD-P: context parallelism c where the stack runs it and each rank keeps at least 4,096 tokens of
  // the sequence (kMinContextTokens); not varied: the base's c where it divides the GPUs.
  bool context = true;
  // PTD-P with p stages that do not divide the layers: Megatron-Core's uneven split (config_space.cpp
  // uneven_split); MoE (TED): experts whole over tensor × expert ranks beside TED's split experts.
  bool uneven_stages = true;
  bool expert_folding = true;

  // Every dimension left at the base workload's value.
  static Vary nothing() { return {false, false, false, false, false, false, false, false}; }
};

// How far a search is, after each configuration.
struct SearchProgress {
  size_t configurations = 0;  // searched so far
  size_t total = 0;           // of every family
  int64_t estimated = 0;      // variants the analytical model estimated so far
  int64_t ranked = 0;         // configurations with a variant that fits, so far
};

struct SearchOptions {
  int64_t gpus = 0;
  std::vector<Family> families;  // empty: every family that applies to the model
  AnalyticalOptions model;
  Vary vary;
  // Estimate every memory-for-time variant instead of skipping those taken to be slower than one that
  // fits or larger than one that does not (config_space.hpp: no_slower, no_larger).
  bool exhaustive = false;
  // Called after each configuration with how far the search is (a search of thousands of GPUs takes
  // minutes: the caller shows progress); none when empty.
  std::function<void(const SearchProgress&)> progress;
};

struct Candidate {
  Family family = Family::four_d;
  std::string label;             // e.g. "x4 y2 z2 d2 mb8 full zero1": everything the search varied
  workloads::Workload workload;  // the base workload with this configuration
  AnalyticalEstimate estimate;
  // Its place (1 = fastest) in the analytical model's ranking; a caller that re-ranks by simulation
  // moves candidates and keeps this.
  size_t analytical_rank = 0;
};

struct Rejected {
  Family family = Family::four_d;
  std::string label;
  std::string reason;                    // e.g. "needs 52.3 GiB per GPU, the device has 40 GiB"
  std::string rule;                      // invalid: the field the broken rule names (e.g. training.global_batch)
  double memory = 0, device_memory = 0;  // out of memory: bytes per GPU its least variant needs, and has
  size_t configuration = 0;              // which configuration (its order in the search): rules are counted by it
};

// A configuration is ranked by its fastest variant that fits in memory; the others are counted.
struct SearchResult {
  std::vector<Candidate> ranked;   // fastest first; ties broken by label (deterministic)
  std::vector<Rejected> rejected;  // valid, but no variant fits in memory (the least memory one named)
  std::vector<Rejected> invalid;   // variants that break a rule of the workload format (e.g. x does not
                                   // divide the heads), each rule once per configuration
  std::vector<Rejected> lacking;   // variants using a feature the workload's framework profile does not have
                                   // (workloads/stack_features.hpp), each feature once per configuration
  int64_t enumerated = 0;          // configurations with a valid variant: ranked + rejected
  int64_t configurations = 0;      // every configuration looked at, valid or not
  int64_t variants = 0;            // memory-for-time variants of every configuration
  int64_t estimated = 0;           // variants the analytical model estimated
  int64_t skipped = 0;  // variants skipped: no faster than one that fits, or no smaller than one that does not
  int64_t broken = 0;   // variants that break a rule or use what the stack lacks: variants = estimated +
                        // skipped + broken
};

// Why no family of `asked` (empty: all) can train the base workload's model, naming what it needs; empty
// when one can. The callers check it where the families are asked for (search's --family, a sweep's best
// configuration), so that the user's error is theirs to name.
std::string families_problem(const workloads::Workload& base, const std::vector<Family>& asked);
// The families of `asked` (empty: all) that can train the base workload's model; families_problem must be
// empty (std::logic_error otherwise).
std::vector<Family> families_for(const workloads::Workload& base, const std::vector<Family>& asked);

// `topology` must cover options.gpus devices (positive) and a family must apply (families_problem empty):
// the callers check both where the user gives them; std::logic_error otherwise.
SearchResult search(const workloads::Workload& base, const topology::Topology& topology, const SearchOptions& options);

}  // namespace paratwin::sim
