#pragma once
// Micro-benchmarks through an executor backend: the plan (micro_plan.hpp) run on every rank at once, each
// op timed alone (so a shared core is measured shared), and the profile fitted to the times.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration/micro_plan.hpp"
#include "exec/backend.hpp"
#include "topology/machine.hpp"

namespace paratwin::calibration {

// Times every op of the plan on every rank at once (collective over MPI_COMM_WORLD; `backend` prepared
// for plan.program).
MicroTimes measure_micro(exec::Backend& backend, int rank, int ranks, const MicroPlan& plan,
                         const MicroOptions& options);

// Collective over MPI_COMM_WORLD (every rank runs every op in the same order; `backend` not yet
// prepared). Returns, on every rank, the profile: raw measurements, fitted parameters and fit errors.
nlohmann::json run_micro(exec::Backend& backend, int rank, int ranks, const topology::Machine& machine,
                         const MicroOptions& options);

}  // namespace paratwin::calibration
