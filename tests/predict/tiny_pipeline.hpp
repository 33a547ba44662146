#pragma once
// The run summary tests' workload: two pipeline stages of one rank each, 8 micro-batches (bubble
// (2-1)/8), lowered for one Perlmutter node.
#include <string>

#include "topology/machine.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace paratwin::test {

struct Run {
  workloads::Workload w;
  workloads::Program program;
  topology::Machine machine;
};

inline Run tiny_pipeline() {
  Run r{workloads::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/tiny-pp-1f1b.json"),
        {},
        topology::resolve_machine("perlmutter")};
  workloads::LowerOptions o;
  o.devices_per_node = r.machine.devices_per_node();
  r.program = workloads::lower(r.w, o);
  return r;
}

}  // namespace paratwin::test
