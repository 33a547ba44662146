#pragma once
// `paratwin search` after the configuration search (sim/search.hpp): the best configurations simulated,
// and the report: the heading with the configurations dropped, the ranking table (the analytical
// model's columns, and the simulated times as they arrive), the fastest simulated configuration, and the
// JSON document of every configuration.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "predict/fidelity.hpp"
#include "predict/predict.hpp"
#include "sim/search.hpp"

namespace paratwin::predict {

// Simulates the first `count` ranked configurations one by one, each in a child process (one SimGrid
// engine per process), telling `progress` which one runs and how long each took. Returns their
// documents in ranking order: predict::to_json's, or {"error": ...} for one that failed.
nlohmann::json simulate_candidates(const sim::SearchResult& result, size_t count, const topology::Machine& machine,
                                   const PointOptions& options,
                                   const std::function<void(const std::string&)>& progress);

// What was searched: a workload on `gpus` GPUs of a machine, with a library, by the placement-aware or
// -agnostic model; the machine's devices per node go into the workloads emitted.
struct SearchSetting {
  std::string workload, machine, library;
  int64_t gpus = 0;
  bool placement_aware = true;
  int64_t devices_per_node = 0;
  std::string stack;  // the workload's framework profile
};

// The setting, the counts of valid, out-of-memory and invalid configurations, the variants estimated
// and skipped, and the first three of each dropped kind with the reason (every one with
// `show_rejected`).
std::string search_heading(const SearchSetting& setting, const sim::SearchResult& result, bool show_rejected);

// The ranking's first `top` rows and every simulated one (the first simulations.size(), re-ranked by
// predict::rerank_by_simulation): their simulated time, and the exposed communication and % of peak of
// the simulation (the analytical model's for the other rows), and where the simulation moved a row,
// its analytical rank; a note says which rows were simulated.
std::string ranking_table(const sim::SearchResult& result, size_t top, const nlohmann::json& simulations);

// How the simulated configurations were simulated: the fidelity chosen and the algorithm overrides.
struct SearchSimulation {
  FidelityChoice choice;
  std::vector<std::string> algorithms;
};

// `paratwin search --json`: the setting, every ranked configuration (its analytical estimate, its
// micro-batch, parallelism, recomputation, the whole workload as `--emit` writes it and, for the first
// simulations.size(), its simulation), and the dropped ones with their reasons.
nlohmann::json search_json(const SearchSetting& setting, const sim::SearchResult& result,
                           const std::optional<SearchSimulation>& simulation, const nlohmann::json& simulations);

}  // namespace paratwin::predict
