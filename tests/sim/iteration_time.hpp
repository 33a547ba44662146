#pragma once
// The simulated iteration time of a Program on a machine, from a forked child (one SimGrid engine per
// process), for tests that need only that number.
#include "sim/engine.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"

namespace paratwin::test {

// -1 after recording a test failure when the child failed.
inline double iteration_time(const topology::Machine& machine, const workloads::Program& program,
                             const sim::SimOptions& options, topology::TopologyOptions topology_options = {}) {
  const auto out = run_simulation([&] {
    const topology::Topology topology(machine, topology_options);
    return std::vector<double>{sim::simulate(program, topology, options).iteration_time};
  });
  return out.empty() ? -1 : out[0];
}

}  // namespace paratwin::test
