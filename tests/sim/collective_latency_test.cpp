// The latency term of a collective at scale, against its closed form. A ring all-gather or
// reduce-scatter over N ranks runs N - 1 steps, each paying a hop's latency, and moves (N - 1)/N of the
// buffer through every member's links:
//   T = L + (N - 1)/N x bytes / (share x B)
// with, where the machine profile names NCCL's tables (Perlmutter, Selene: v2.15), L = NCCL's latency
// of the protocol it picks (src/graph/tuning.cc: base + (N - nodes) intra-node hops + (nodes - 1)
// network hops; each hop's latency stands for its path's) and share its fraction of the bus bandwidth;
// else (Frontier's RCCL, whose profile step of 39 us was fitted this way) L = (N - 1) x
// (collective_step_us + the path latency of the ring's slowest hop): every step of the ring waits for
// its slowest hop, the cross-group one of the dragonfly at 2,048 GCDs and more. B: the bus bandwidth of
// a multi-node ring, its rings (one per NIC, RCCL's both ways) times the bandwidth the topology leaves
// each ring flow: at most the node's NICs together. 1 MB per rank (1-4 GB buffers over 1,024-4,096
// GPUs) and 1 MB in all (latency alone; NCCL takes LL).
// And PAT (NCCL v2.23+, one rank per node): T = NCCL's PAT latency + sum over its log2 N steps of the
// bytes each moves / (share x the NIC's bandwidth).
//
// Tolerance 0.5 %: both models add to the closed form only the path latency of the transfer that a
// step's data takes (one for a ring's aggregated step, one per PAT step: a few microseconds against
// 10-100 ms), which the closed form leaves out, as NCCL's own estimate does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "sim/analytical_collectives.hpp"
#include "sim/engine.hpp"
#include "sim/group_layouts.hpp"
#include "sim/nccl_tuning.hpp"
#include "tests/sim/one_collective.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace ps = paratwin::sim;
namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;

namespace {

constexpr double kTolerance = 0.005;
constexpr double kPerRank = 1e6;

struct Timed {
  double analytical = 0, simulated = -1;
  double bus = 0;                         // the ring's bus bandwidth, bytes/s
  double slowest_hop = 0;                 // the path latency of the ring's slowest hop, seconds
  std::vector<ps::Algorithm> algorithms;  // SimGrid's choice
};

// One collective of `kind` over a "data" group laid out as `grid` on `machine`, every group at once.
Timed time_both(const pt::Machine& machine, const pw::Grid& grid, pw::OpKind kind, double bytes) {
  const auto program = paratwin::test::one_collective(grid, machine.devices_per_node(), kind, bytes);
  const pt::Topology topology(machine);
  const std::string library = machine.profile.library;
  Timed t;
  ps::CollectiveTimes times(topology, library, true);
  t.analytical = times.seconds(program, program.placement(), 0, kind, program.grid.mask("data"), bytes, 0);
  // The ring's bus bandwidth: its rings (one per channel, each way where the library runs them both
  // ways) times what the topology gives the slowest ring flow when all of them run.
  const auto mask = program.grid.mask("data");
  const auto placement = program.placement();
  ps::GroupLayouts layouts(program, placement, topology, library);
  const auto orders = ps::ring_orders(layouts.of(0, mask));
  t.bus = static_cast<double>(orders.size()) * times.ring_bandwidth(program, placement, 0, mask);
  for (const auto& o : orders)
    for (size_t i = 0; i < o.size(); ++i)
      t.slowest_hop = std::max(
          t.slowest_hop, topology.path(placement.device_of(o[i]), placement.device_of(o[(i + 1) % o.size()])).latency);
  const auto out = paratwin::test::run_simulation([&] {
    ps::SimOptions options;
    options.library = library;
    options.fidelity = ps::Fidelity::fast;
    const auto r = ps::simulate(program, topology, options);
    std::vector<double> v{r.iteration_time};
    for (const auto& c : r.collectives)
      for (ps::Algorithm a : c.algorithms) v.push_back(static_cast<double>(a));
    return v;
  });
  if (!out.empty()) t.simulated = out[0];
  for (size_t i = 1; i < out.size(); ++i) t.algorithms.push_back(static_cast<ps::Algorithm>(static_cast<int>(out[i])));
  return t;
}

// The ring's closed form (header), of bus bandwidth `bus` and slowest hop `hop`.
double ring_closed_form(const pt::Machine& machine, pw::OpKind kind, int ranks, double bytes, double bus, double hop) {
  const int nodes = static_cast<int>(ranks / machine.devices_per_node());
  const double moved = (ranks - 1.0) / ranks * bytes;
  if (machine.profile.nccl) {
    const auto c = ps::nccl_choice(ps::nccl_hardware(machine), kind, ps::NcclAlgorithm::ring, ranks, nodes, bytes);
    return c.latency + moved / (c.bandwidth_share * bus);
  }
  return (ranks - 1) * (machine.profile.collective_step + hop) + moved / bus;
}

void expect_ring_at_scale(const std::string& name) {
  const auto full = pt::resolve_machine(name);
  double nics = 0;
  for (const auto& nic : full.node.nics) nics += nic.bandwidth;
  for (const int ranks : {1024, 2048, 4096}) {
    const auto machine = full.slice(ranks / full.devices_per_node());
    // 1 MB per rank (bandwidth and latency), and 1 MB in all (latency alone: NCCL takes LL).
    for (const double bytes : {ranks * kPerRank, kPerRank})
      for (const auto kind : {pw::OpKind::all_gather, pw::OpKind::reduce_scatter}) {
        const Timed t = time_both(machine, pw::Grid({{"data", ranks}, {"pipe", 1}}), kind, bytes);
        const double closed = ring_closed_form(machine, kind, ranks, bytes, t.bus, t.slowest_hop);
        std::printf(
            "%s %s of %.0f MB over %d: bus %.1f GB/s (NICs %.0f), closed form %.4f ms, analytical %.4f ms (%+.3f %%), "
            "SimGrid %.4f ms (%+.3f %%)\n",
            name.c_str(), pw::to_string(kind), bytes / 1e6, ranks, t.bus / 1e9, nics / 1e9, 1e3 * closed,
            1e3 * t.analytical, 100 * (t.analytical / closed - 1), 1e3 * t.simulated, 100 * (t.simulated / closed - 1));
        // The bus: at most the node's NICs (less where the network's routes make the rings share links).
        EXPECT_LE(t.bus, nics * (1 + 1e-9)) << name;
        EXPECT_NEAR(t.analytical / closed, 1.0, kTolerance) << name << " " << ranks << " " << bytes;
        EXPECT_NEAR(t.simulated / closed, 1.0, kTolerance) << name << " " << ranks << " " << bytes;
        ASSERT_EQ(t.algorithms.size(), 1u);
        EXPECT_EQ(t.algorithms[0], ps::Algorithm::ring);
      }
  }
}

}  // namespace

TEST(CollectiveLatency, RingOverThousandsOfPerlmutterGpusMatchesItsClosedForm) {
  expect_ring_at_scale("perlmutter");
}

TEST(CollectiveLatency, RingOverThousandsOfSeleneGpusMatchesItsClosedForm) {
  expect_ring_at_scale("selene");
}

TEST(CollectiveLatency, RingOverThousandsOfFrontierGcdsMatchesItsClosedForm) {
  expect_ring_at_scale("frontier");
}

namespace {

// PAT's closed form (header): NCCL's PAT latency plus, per step of distance d, the bytes of min(d, N - d)
// ranks at the protocol's share of the bandwidth the topology leaves each of that step's flows (every
// group's flows i -> i - d at once: cycles of the machine's devices, timed as rings), plus that step's
// slowest path latency: the transfer's own, which NCCL's figure does not separate.
double pat_closed_form(const pt::Machine& machine, const pw::Program& program, pw::OpKind kind, double bytes) {
  const pt::Topology topology(machine);
  const auto placement = program.placement();
  const auto mask = program.grid.mask("data");
  const auto n = static_cast<int>(program.grid.group_size(mask));
  const auto c = ps::nccl_choice(ps::nccl_hardware(machine), kind, ps::NcclAlgorithm::pat, n, n, bytes);
  double seconds = c.latency;
  for (int d = 1; d < n; d *= 2) {
    std::vector<std::vector<int64_t>> cycles;
    double latency = 0;
    for (int64_t first = 0; first < program.grid.size(); ++first) {
      if (program.grid.index_in_group(first, mask) != 0) continue;
      const auto device = [&](int k) { return placement.device_of(program.grid.group_member(first, mask, k)); };
      for (int start = 0; start < std::gcd(n, d); ++start) {
        std::vector<int64_t> cycle;
        for (int k = start; cycle.empty() || k != start; k = (k - d + n) % n) cycle.push_back(device(k));
        cycles.push_back(std::move(cycle));
      }
      for (int k = 0; k < n; ++k)
        latency = std::max(latency, topology.path(device(k), device((k - d + n) % n)).latency);
    }
    const double bandwidth = topology.rings(cycles).bandwidth;
    seconds += std::min(d, n - d) * bytes / n / (c.bandwidth_share * bandwidth) + latency;
  }
  return seconds;
}

}  // namespace

// NCCL v2.23+ over one GPU per node of Perlmutter (each data group one GPU of every node, four groups at
// once): the tuner takes PAT for these sizes, and both models time it as its closed form; with the
// v2.22 tables the same group runs a ring, and so does v2.27 where the buffer is large.
TEST(CollectiveLatency, PatOverOneGpuPerNodeMatchesItsClosedForm) {
  for (const auto& [version, nodes] : {std::pair{"2.27", 256}, std::pair{"2.27", 1024}, std::pair{"2.23", 256}}) {
    auto full = pt::resolve_machine("perlmutter");
    full.profile.nccl->tuning = version;
    const auto machine = full.slice(nodes);
    const pw::Grid grid({{"inner", 4}, {"pipe", 1}, {"data", nodes}});
    // 64 kB per rank and 1 MB in all: sizes for which NCCL's model prefers PAT to the ring (at 1 MB per
    // rank, 256 MB over 256 nodes, the ring's bandwidth wins: 13.8 against 14.4 ms in NCCL's estimates).
    for (const double bytes : {nodes * 64e3, kPerRank})
      for (const auto kind : {pw::OpKind::all_gather, pw::OpKind::reduce_scatter}) {
        const auto program = paratwin::test::one_collective(grid, 4, kind, bytes);
        const double closed = pat_closed_form(machine, program, kind, bytes);
        const Timed t = time_both(machine, grid, kind, bytes);
        std::printf(
            "NCCL %s PAT %s of %.0f MB over %d nodes: closed form %.4f ms, analytical %.4f ms (%+.3f %%), "
            "SimGrid %.4f ms (%+.3f %%)\n",
            version, pw::to_string(kind), bytes / 1e6, nodes, 1e3 * closed, 1e3 * t.analytical,
            100 * (t.analytical / closed - 1), 1e3 * t.simulated, 100 * (t.simulated / closed - 1));
        EXPECT_NEAR(t.analytical / closed, 1.0, kTolerance) << version << " " << nodes << " " << bytes;
        EXPECT_NEAR(t.simulated / closed, 1.0, kTolerance) << version << " " << nodes << " " << bytes;
        ASSERT_EQ(t.algorithms.size(), 1u);
        EXPECT_EQ(t.algorithms[0], ps::Algorithm::pat);
      }
  }
  for (const auto& [version, bytes] : {std::pair{"2.22", 16e6}, std::pair{"2.27", 256e6}}) {
    auto machine = pt::resolve_machine("perlmutter").slice(256);
    machine.profile.nccl->tuning = version;
    const Timed ring =
        time_both(machine, pw::Grid({{"inner", 4}, {"pipe", 1}, {"data", 256}}), pw::OpKind::all_gather, bytes);
    ASSERT_EQ(ring.algorithms.size(), 1u);
    EXPECT_EQ(ring.algorithms[0], ps::Algorithm::ring) << version;
  }
}
