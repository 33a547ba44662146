#pragma once
// What predicting one point gives, whichever model predicted it: the figures every command reads
// (iteration time, throughput, the busiest stage's breakdown, memory), and the model's own detail
// (SimGrid's run summary and how it ran, or the analytical estimate).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_summary.hpp"
#include "sim/analytical_model.hpp"

namespace paratwin::predict {

enum class Model { simulate, analytical };
const char* to_string(Model m);

// How SimGrid ran a prediction.
struct SimulationRecord {
  int64_t nodes = 0;
  std::string fidelity;            // "exact" or "fast"
  std::string fidelity_chosen_by;  // "auto: above 512 ranks", "--fidelity fast", ...
  std::string library;
  // Under pccl, the library that runs every collective PCCL does not implement (all but all-gather and
  // reduce-scatter): sim::vendor_library of the machine. Empty under the other libraries.
  std::string vendor_library;
  std::string profile;  // the fitted profile applied to the machine; empty: none
  int64_t flows = 0, transfers = 0, actors = 0;
  bool folded = false;
  std::string folded_by;                          // "replica" or "node", when folded
  std::optional<std::string> not_folded_because;  // when folding was asked for and the program did not allow it
};

struct Prediction {
  Model model = Model::simulate;
  double iteration_seconds = 0, tokens_per_second = 0;
  // Model FLOPs (MFU, no recomputation) and hardware FLOPs (HFU, with it) per device, as RunSummary's.
  double model_tflops_per_device = 0, percent_of_peak = 0;
  double hardware_tflops_per_device = 0, percent_of_peak_hardware = 0;
  // Per rank of the busiest stage (most compute): its time is the iteration's. The op walker's ledger
  // (workloads/op_walker.hpp) for both models; the analytical bubble adds pipeline fill and drain.
  double compute_seconds = 0, exposed_comm_seconds = 0, bubble_seconds = 0, other_idle_seconds = 0;
  double exposed_data_seconds = 0;   // of the data-parallel collectives, not hidden behind compute
  double memory_bytes_per_rank = 0;  // of the busiest (simulate: the largest) stage
  bool fits = true;                  // in device memory

  std::optional<reports::RunSummary> summary;       // simulate
  std::optional<SimulationRecord> simulation;       // simulate
  std::optional<sim::AnalyticalEstimate> estimate;  // analytical
  std::vector<std::string> warnings;                // options that had no effect
};

// The prediction of a SimGrid run and of an analytical estimate.
Prediction prediction_of(reports::RunSummary summary, SimulationRecord record);
Prediction prediction_of(const sim::AnalyticalEstimate& e, int64_t ranks);

// simulate: the document `paratwin simulate --json` writes (the run summary and how it ran);
// analytical: iteration, compute, exposed communication, bubble, throughput, memory and collectives.
nlohmann::json to_json(const Prediction& p);
nlohmann::json to_json(const sim::AnalyticalEstimate& e);
// A simulate document back (a child process's result); throws std::invalid_argument otherwise.
Prediction prediction_from_json(const nlohmann::json& j);

}  // namespace paratwin::predict
