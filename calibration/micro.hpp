#pragma once
// Micro-benchmarks through an executor backend (issue 7): GEMMs of many shapes, element-wise sweeps and
// every collective kind over message sizes and group sizes, each op timed alone on every rank at once
// (so a shared core is measured shared), and the profile parameters fitted to them.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/backend.hpp"
#include "topology/machine.hpp"

namespace paratwin::calibration {

struct MicroOptions {
  bool quick = false;  // fewer and smaller sizes (tests)
  int repeats = 5;     // each op; the median counts
  // GEMM shapes to time one by one besides the sweep (the shapes of the workloads to be predicted):
  // the profile lists their seconds, which the simulator uses for exactly these shapes.
  std::vector<workloads::GemmShape> shapes;
};

// Appends the GEMM shapes of a Program (every role's) that `shapes` does not hold yet.
void add_gemm_shapes(const workloads::Program& program, std::vector<workloads::GemmShape>& shapes);

// Collective over MPI_COMM_WORLD (every rank runs every op in the same order; `backend` not yet
// prepared). Returns, on every rank, the profile: raw measurements, fitted parameters and fit errors.
nlohmann::json run_micro(exec::Backend& backend, int rank, int ranks, const topology::Machine& machine,
                         const MicroOptions& options);

}  // namespace paratwin::calibration
