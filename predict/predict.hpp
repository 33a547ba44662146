#pragma once
// One way to predict a point: a workload on a machine, by SimGrid or by the analytical model. Every
// command that predicts (simulate, search, sweep, validate, baseline) calls predict(); SimGrid runs one
// engine per process, so callers that predict many points run each in a child (predict_in_child).
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "predict/fidelity.hpp"
#include "predict/prediction.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

struct PointOptions {
  Model model = Model::simulate;
  int64_t nodes = 0;              // a slice of this many nodes; 0: as many as the workload needs
  std::string library;            // empty: the machine profile's
  bool placement_aware = true;    // analytical: load the machine's links with every group's rings
  std::string fidelity = "auto";  // simulate: "auto", "exact" or "fast"
  bool fold = false;              // simulate: with "auto", fold whatever the rank count
  // simulate: the choice of fidelity already made from `fidelity` and `fold` where the user gave them
  // (the CLI prints it before anything slow); unset: predict makes it.
  std::optional<FidelityChoice> fidelity_choice;
  std::vector<std::string> algorithms;  // simulate: "KIND=ALGORITHM" overrides
  std::string profile;                  // the profile the caller applied to the machine, recorded
  std::ostream* trace = nullptr;        // simulate: stream a Chrome trace here as the simulation runs
  std::vector<int64_t> trace_ranks;     // empty: reports::default_trace_ranks (one pipeline column)
  bool progress = false;                // simulate: the engine's progress on stderr
  // simulate: refuse (InputError naming --fidelity) a run estimated to take longer than this many
  // seconds (sim/run_estimate.hpp); 0: no limit. A run estimated to need more address space than the
  // process may have (ulimit -v) is refused whatever this says.
  double max_seconds = 0;
  // Called before each long step of a simulation ("lowering ...", "routing ..."), when set.
  std::function<void(const std::string&)> step;
  // Called with what had no effect ("--algorithm all_to_all=pairwise: the workload has no all_to_all
  // collectives"), when set; Prediction::warnings has it too.
  std::function<void(const std::string&)> warn;
};

// A built-in machine by name, or a machine file, with a fitted profile applied when `profile` is set.
topology::Machine load_machine(const std::string& reference, const std::string& profile = "");

// The communication library a prediction uses: `requested`, or the machine profile's.
std::string library_for(const topology::Machine& machine, const std::string& requested);

// Nodes that hold `devices` devices of `machine` (the last one partly used).
int64_t nodes_for(const topology::Machine& machine, int64_t devices);

// The machine cut to the nodes that hold `devices` devices, routed for `library`. Throws InputError
// (--machine) when the machine has fewer devices.
topology::Topology topology_for(const topology::Machine& machine, int64_t devices, const std::string& library);

// Throws InputError (naming the option: --nodes, --fidelity, --fold, --algorithm) when the options do
// not fit the workload or the machine (--machine when the workload needs more devices than the machine
// has), and workloads::WorkloadError when it does not lower.
Prediction predict(const workloads::Workload& w, const topology::Machine& machine, const PointOptions& options);

// What predict() checks of a simulated point before it simulates (the machine holds the workload, the
// fidelity options, the --algorithm overrides and, with `lower`, that the workload lowers for the machine
// and the overrides can run its groups), without simulating. Throws as predict() does. A command that
// predicts in child processes (compare) calls it first, so that an input error is reported as one before
// anything runs.
void check_point(const workloads::Workload& w, const topology::Machine& machine, const PointOptions& options,
                 bool lower = true);

// predict() in a child process (a SimGrid engine of its own; an analytical prediction runs here). Throws
// std::runtime_error with the child's error when it fails or dies.
Prediction predict_in_child(const workloads::Workload& w, const topology::Machine& machine,
                            const PointOptions& options);

}  // namespace paratwin::predict
