#pragma once
// Predicting the papers' reference points (`paratwin validate`, `paratwin baseline`): every point of a
// suite with the analytical model or with SimGrid (at `paratwin simulate`'s automatic fidelity, and
// analytically beside it), in child processes.
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "validation/reference.hpp"
#include "validation/report.hpp"

namespace paratwin::validation {

struct ReferenceOptions {
  // Folder of machine files that replace built-in machines of the same name (what-if studies, and the
  // perturbation check of the baselines); empty: none.
  std::string machines;
  int jobs = 2;
  bool progress = false;  // one line per finished point on stderr
  // kernel_efficiency by framework profile, replacing the profile's value in every workload that uses
  // it (`validate --fit` tries values).
  std::map<std::string, double> kernel_efficiency;
  // Also predict each point's sensitivity alternatives (validate; not the baselines).
  bool sensitivity = false;
};

struct ReferenceTask {
  size_t suite = 0, point = 0;
  std::string model;  // "analytical" or "simulate"
};

// One object per task, in task order: {"model", "value", "iteration_s", "configuration", "fits",
// "status" ("ok"/"failed"), "error"}, and for a simulated point "analytical": {"value", "iteration_s",
// "status", "error"}, the analytical model's prediction of the same configuration. A failing point fails
// alone, with its message.
std::vector<nlohmann::json> predict_points(const std::vector<ReferenceSuite>& suites,
                                           const std::vector<ReferenceTask>& tasks, const ReferenceOptions& options);

// GPUs of every point, [suite][point]: the collective's, or the workload's ranks (0 when the workload
// cannot be read: its prediction then fails with the reader's message). Read once: they choose the
// model and label the rows.
using PointGpus = std::vector<std::vector<int64_t>>;
PointGpus point_gpus(const std::vector<ReferenceSuite>& suites);

// Every point of `suites`, predicted by `model`: "analytical", "simulate", or "auto" (simulated up to
// `simulate_up_to` GPUs, analytically beyond).
std::vector<ReferenceTask> reference_tasks(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus,
                                           const std::string& model, int64_t simulate_up_to);

// The validation rows of predict_points' results, one per task: the value, its range, the analytical
// model's value beside a simulated one, or the point's error.
std::vector<ValidationRow> to_rows(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus,
                                   const std::vector<ReferenceTask>& tasks,
                                   const std::vector<nlohmann::json>& predictions);

// The machine a point runs on: its file in `options.machines` when there is one, else as written.
std::string machine_reference(const std::string& machine, const ReferenceOptions& options);

// Reads every NAME.json of a --machines folder as a machine file, so that a broken one fails the
// command before any point is predicted (in a child, it would only fail the points that use it).
// Throws InputError naming the file, JSON path and rule, or the folder when it is not one.
void check_machine_folder(const std::string& dir);

}  // namespace paratwin::validation
