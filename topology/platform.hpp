#pragma once
// The SimGrid platform of a machine: one host per device and one SimGrid link per direction of every
// link of the Topology, inside a NetZone of our own whose routes are the Topology's routes. This
// avoids SimGrid 3.32's dragonfly zone (crashes with more groups than routers per chassis, and one
// fixed router pair between groups) and scales to the whole of Frontier.
//
// Two kinds of extra hosts serve the aggregated (fast) engine:
// - actor hosts, one per device: actors live there, and the route between two actor hosts carries no
//   link, so a mailbox transfer between actors is a pure synchronisation that never enters the
//   max-min solver;
// - phase sinks: a transfer from a device to a sink follows a route the engine sets just before it
//   starts the transfer (PhaseRoutes) — the union of the routes of many device-to-device transfers of
//   equal size, a link listed once per transfer crossing it. SimGrid then solves one variable where it
//   would have solved one per transfer, and the links are loaded as by the separate transfers.
#include <cstdint>
#include <memory>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

#include "topology/topology.hpp"

namespace paratwin::topology {

// Network model settings every paratwin simulation uses (SimGrid's options, [simgrid-repo]): CM02 without
// TCP-gamma throttling and without reverse-direction cross traffic; no stack guard pages (each costs
// two memory mappings, and 32,768 actors exceed the process's 65,530; sim::simulate turns them on for
// fewer actors); actor stacks of kActorStackKiB. Call before loading anything.
void configure_engine(simgrid::s4u::Engine& engine);
// Each actor's stack (SimGrid's contexts/stack-size, KiB). SimGrid's default, 8 MiB, is reserved whole
// per actor: 8,192 actors took 64 GiB of address space and aborted under an 8 GiB limit. Measured need
// (2026-11-26, stacks shrunk until a 64 KiB guard below them faulted, with a gzip trace of every rank
// and progress on): at most 16 KiB over the tiny examples, GPT-80B on 64 Frontier GCDs exact, fast and
// folded and on 8,192 folded, 128-1,024 data-parallel ranks fast and folded, MoE, Optimus and an
// interleaved pipeline, exact and fast; the deepest frames are the op walker's completion
// chain with the trace writer on top (a 64 KiB buffer on the stack there once needed more than 64 KiB).
// 128 KiB leaves 8 times that; up to 16,384 actors a guard page under each stack turns an overflow into
// a fault rather than corruption (sim/engine.cpp).
constexpr int kActorStackKiB = 128;
// The process's one engine, logging warnings and worse only, configured as above.
std::unique_ptr<simgrid::s4u::Engine> start_engine();

// Latency of a route between actor hosts: SimGrid refuses an empty route without latency.
constexpr double kSyncLatency = 1e-9;

// Routes from devices to phase sinks, set by the engine before it starts a transfer to a sink.
// They carry no latency (the engine adds a phase's latency itself). The resources must stay alive
// until the transfer has started.
class PhaseRoutes {
 public:
  void set(int64_t device, int sink, const std::vector<uint32_t>& resources);
  const std::vector<uint32_t>& get(int64_t device, int sink) const;

 private:
  std::unordered_map<uint64_t, const std::vector<uint32_t>*> routes_;
};

struct PlatformOptions {
  bool zero_latency = false;  // routes carry no latency (studies where communication is free)
  bool actor_hosts = false;   // one actor host per device
  int sinks = 0;              // phase sinks
};

struct Platform {
  std::vector<simgrid::s4u::Host*> hosts;        // by global device index (node · devices_per_node + local)
  std::vector<simgrid::s4u::Host*> actor_hosts;  // by device index, when asked
  std::vector<simgrid::s4u::Host*> sinks;
  std::shared_ptr<PhaseRoutes> phase_routes;  // routes from devices to sinks
};

// Builds the platform of `topology` as the engine's root zone. `topology` must outlive the simulation.
Platform build_platform(const Topology& topology, const PlatformOptions& options = {});

}  // namespace paratwin::topology
