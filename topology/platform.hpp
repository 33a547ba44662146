#pragma once
// The SimGrid platform of a machine: one host per device and one SimGrid link per direction of every
// link of the Topology, inside a NetZone of our own whose routes are the Topology's routes. This
// avoids SimGrid 3.32's dragonfly zone (crashes with more groups than routers per chassis, and one
// fixed router pair between groups) and scales to the whole of Frontier.
#include <memory>
#include <simgrid/s4u.hpp>
#include <vector>

#include "topology/topology.hpp"

namespace paratwin::topology {

// Network model settings every paratwin simulation uses (see shared/SIMGRID-NOTES.md): CM02 without
// TCP-gamma throttling and without reverse-direction cross traffic. Call before loading anything.
void configure_engine(simgrid::s4u::Engine& engine);
// The process's one engine, logging warnings and worse only, configured as above.
std::unique_ptr<simgrid::s4u::Engine> start_engine();

struct Platform {
  std::vector<simgrid::s4u::Host*> hosts;  // by global device index (node · devices_per_node + local)
};

// Builds the platform of `topology` as the engine's root zone. `topology` must outlive the simulation.
// With `zero_latency`, routes carry no latency (studies where communication is free).
Platform build_platform(const Topology& topology, bool zero_latency = false);

}  // namespace paratwin::topology
