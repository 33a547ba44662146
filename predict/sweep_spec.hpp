#pragma once
// The spec of `paratwin sweep`: workloads × machines × configurations × models × GPU counts, read
// strictly (unknown keys are errors; every error names the spec file and the JSON path). The format is
// documented in results/sweep/README.md.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paratwin::predict {

enum class Scaling { weak, strong };
enum class ConfigurationMode { as_is, best, listed };

// One entry of a "configurations" list: a workload `parallelism` object without data.size (the sweep
// sets it from the GPU count), optionally the optimizations and micro-batch that go with it (replacing
// the workload's), and a label for outputs.
struct ListedConfiguration {
  std::string label;             // empty: derived from the configuration
  nlohmann::json parallelism;    // as in a workload file
  nlohmann::json optimizations;  // null: the workload's
  int64_t micro_batch = 0;       // 0: the workload's
  nlohmann::json entry;          // the entry as written, for point keys
};

struct SweepSpec {
  std::string file;  // the spec's path, for messages
  std::string name;
  std::string description;
  std::vector<std::string> workloads;       // as written in the spec (outputs name these)
  std::vector<std::string> workload_files;  // resolved against the spec's folder
  std::vector<std::string> machines;        // as written: built-in names or files
  std::vector<std::string> machine_refs;    // what topology::resolve_machine takes
  std::vector<std::string> machine_texts;   // file contents (or the built-in name), for point keys
  std::vector<int64_t> gpus;                // increasing
  Scaling scaling = Scaling::weak;
  ConfigurationMode configurations = ConfigurationMode::as_is;
  std::vector<ListedConfiguration> listed;  // ConfigurationMode::listed
  std::vector<std::string> models;          // "simulate" and/or "analytical", in that order
  std::string fidelity = "auto";            // "auto" (by each point's GPUs, as `paratwin simulate`), "fast" or "exact"
  std::string library;                      // empty: each machine profile's
  bool fold = false;                        // with "auto": fold at every GPU count, as `paratwin simulate --fold`

  // Configurations per (workload, machine): the listed ones, or one ("as-is" or "best").
  size_t configuration_count() const { return configurations == ConfigurationMode::listed ? listed.size() : 1; }
};

// Throws InputError "FILE: json.path: rule" for any bad input; reads every workload file (it must exist)
// and machine (it must be valid) that the spec names, but does not validate workloads: a workload
// that fails to parse is a failing point of the sweep, not an error of the spec.
SweepSpec load_sweep_spec(const std::string& path);
// The same for a spec's text: `path` is where it stands (its folder resolves the paths in it) and what
// errors name.
SweepSpec parse_sweep_spec(const std::string& text, const std::string& path);

const char* to_string(Scaling s);
const char* to_string(ConfigurationMode c);

}  // namespace paratwin::predict
