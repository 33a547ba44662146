#include "sim/analytical_collectives.hpp"

#include <algorithm>
#include <limits>

#include "sim/group_layouts.hpp"

namespace paratwin::sim {

using workloads::AxisMask;
using workloads::OpKind;

namespace {

// The devices of every group over `mask`, each indexed by member: the groups whose collectives run at
// once and load the machine together.
std::vector<std::vector<int64_t>> every_group(const workloads::Grid& grid, const workloads::PlacementMap& placement,
                                              AxisMask mask) {
  std::vector<std::vector<int64_t>> out;
  const int64_t size = grid.group_size(mask);
  for (int64_t r = 0; r < grid.size(); ++r) {
    if (grid.index_in_group(r, mask) != 0) continue;
    auto& devices = out.emplace_back();
    for (int64_t k = 0; k < size; ++k) devices.push_back(placement.device_of(grid.group_member(r, mask, k)));
  }
  return out;
}

}  // namespace

CollectiveTimes::CollectiveTimes(const topology::Topology& topology, std::string library, bool placement_aware)
    : topology_(topology),
      library_(std::move(library)),
      placement_aware_(placement_aware),
      step_costs_(StepCosts::of(topology.machine(), library_)),
      tuner_(topology, library_) {
  // Seed 002 eq. 5.7's β_inter: what one ring crossing between two nodes gets.
  for (const auto& nic : topology.machine().node.nics) flat_bandwidth_ = std::max(flat_bandwidth_, nic.bandwidth);
  if (flat_bandwidth_ <= 0)
    for (const auto& link : topology.machine().node.links) flat_bandwidth_ = std::max(flat_bandwidth_, link.bandwidth);
}

std::vector<int64_t> CollectiveTimes::structure(const workloads::PlacementMap& placement, AxisMask mask) {
  std::vector<int64_t> key;  // group axes negative
  int64_t run = 1;
  int in = -1;
  for (const auto& digit : placement.digits()) {
    const int64_t size = digit.size;
    if (size == 1) continue;
    const int masked = (mask >> digit.axis) & 1u ? 1 : 0;
    if (masked == in) {
      run *= size;
      continue;
    }
    if (in >= 0) key.push_back(in ? -run : run);
    run = size;
    in = masked;
  }
  if (in >= 0) key.push_back(in ? -run : run);
  return key;
}

void CollectiveTimes::load(Loads& loads, const std::vector<std::vector<int64_t>>& rings) const {
  topology::Route r;
  for (const auto& ring : rings)
    for (size_t i = 0; ring.size() > 1 && i < ring.size(); ++i) {
      topology_.route(ring[i], ring[(i + 1) % ring.size()], r);
      for (uint32_t id : r.resources) ++loads[id];
    }
}

void CollectiveTimes::load_directed(Loads& loads, const std::vector<std::pair<int64_t, int64_t>>& edges) const {
  topology::Route r;
  for (const auto& [from, to] : edges) {
    topology_.route(from, to, r);
    for (uint32_t id : r.resources) ++loads[id];
  }
}

double CollectiveTimes::edge_bandwidth(Group& g, int64_t from, int64_t to, Pattern pattern, size_t tree_step) {
  if (!placement_aware_) return flat_bandwidth_;
  if (pattern != Pattern::trees) tree_step = 0;
  if (pattern == Pattern::trees) tree_step = std::min(tree_step, g.trees.size() - 1);
  auto& cache = g.edges[static_cast<int>(pattern)];
  const auto key = std::make_tuple(from, to, tree_step);
  const auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  const Loads& loads = pattern == Pattern::pairs ? g.pairs : pattern == Pattern::trees ? g.trees[tree_step] : g.rings;
  double bandwidth = std::numeric_limits<double>::infinity();
  for (uint32_t id : topology_.route(from, to).resources) {
    const auto it = loads.find(id);
    const double flows = it == loads.end() ? 1.0 : static_cast<double>(it->second);
    bandwidth = std::min(bandwidth, topology_.resource(id).bandwidth / flows);
  }
  return cache[key] = bandwidth;
}

CollectiveTimes::Group& CollectiveTimes::group(const workloads::Program& program,
                                               const workloads::PlacementMap& placement, int64_t rank, AxisMask mask) {
  auto key = structure(placement, mask);
  const auto found = groups_.find(key);
  if (found != groups_.end()) return found->second;
  const auto& grid = program.grid;
  Group g;
  const int64_t first = grid.group_member(rank, mask, 0);
  GroupLayouts layouts(program, placement, topology_, library_);
  g.layout = layouts.of(first, mask);
  const auto orders = ring_orders(g.layout);
  const int64_t size = grid.group_size(mask);
  for (int64_t k = 0; k < size; ++k) g.devices.push_back(placement.device_of(grid.group_member(first, mask, k)));
  for (const auto& o : orders)
    for (size_t i = 0; i < o.size(); ++i)
      g.latency = std::max(
          g.latency,
          topology_.path(g.devices[static_cast<size_t>(o[i])], g.devices[static_cast<size_t>(o[(i + 1) % o.size()])])
              .latency);
  g.ring_bandwidth = flat_bandwidth_;
  if (placement_aware_) {
    // Every group of these axes runs its rings at once, as the layers' collectives do.
    std::vector<std::vector<int64_t>> rings;
    for (const auto& devices : every_group(grid, placement, mask))
      for (const auto& o : orders) {
        std::vector<int64_t> ring;
        for (int32_t k : o) ring.push_back(devices[static_cast<size_t>(k)]);
        rings.push_back(std::move(ring));
      }
    load(g.rings, rings);
    g.ring_bandwidth = std::numeric_limits<double>::infinity();
    for (const auto& o : orders)
      for (size_t i = 0; i < o.size(); ++i)
        g.ring_bandwidth = std::min(
            g.ring_bandwidth, edge_bandwidth(g, g.devices[static_cast<size_t>(o[i])],
                                             g.devices[static_cast<size_t>(o[(i + 1) % o.size()])], Pattern::rings));
  }
  return groups_.emplace(std::move(key), std::move(g)).first->second;
}

double CollectiveTimes::ring_bandwidth(const workloads::Program& program, const workloads::PlacementMap& placement,
                                       int64_t rank, AxisMask mask) {
  if (program.grid.group_size(mask) <= 1) return 0;
  return group(program, placement, rank, mask).ring_bandwidth;
}

double CollectiveTimes::seconds(const workloads::Program& program, const workloads::PlacementMap& placement,
                                int64_t rank, OpKind kind, AxisMask mask, double bytes, int32_t root) {
  const int64_t size = program.grid.group_size(mask);
  if (size <= 1) return 0;
  auto key = std::make_tuple(structure(placement, mask), static_cast<int>(kind), bytes, root);
  const auto found = seconds_.find(key);
  if (found != seconds_.end()) return found->second;
  Group& g = group(program, placement, rank, mask);
  const Algorithm algorithm = tuner_.choose(kind, g.layout, bytes);
  const bool pairs = algorithm == Algorithm::pairwise || algorithm == Algorithm::direct;
  const Pattern pattern = pairs ? Pattern::pairs : algorithm == Algorithm::tree ? Pattern::trees : Pattern::rings;
  if (pattern == Pattern::trees && !g.trees_known && placement_aware_) {
    // Every group's tree edges of one step at once, in the direction they carry data in that step
    // (children to parents up, parents to children down): a member whose two children send at once
    // shares its links between them, while the other direction of the links stays free.
    const auto trees = plan_group(OpKind::all_reduce, Algorithm::tree, g.layout, 1, 0, Fidelity::fast);
    const auto groups = every_group(program.grid, placement, mask);
    g.trees.resize(std::max<size_t>(1, trees.front().size()));
    for (size_t step = 0; step < trees.front().size(); ++step) {
      std::vector<std::pair<int64_t, int64_t>> edges;
      for (const auto& devices : groups)
        for (size_t me = 0; me < devices.size(); ++me)
          for (const Transfer& t : trees[me][step].sends)
            edges.emplace_back(devices[me], devices[static_cast<size_t>(t.peer)]);
      load_directed(g.trees[step], edges);
    }
    g.trees_known = true;
  }
  if (pairs && !g.pairs_known && placement_aware_) {
    // All-to-all: every member of every group sends to every other member at once (routed as
    // two-member rings, one per pair). Only expert groups exchange, and they are small.
    std::vector<std::vector<int64_t>> two;
    for (const auto& devices : every_group(program.grid, placement, mask))
      for (size_t a = 0; a < devices.size(); ++a)
        for (size_t b = a + 1; b < devices.size(); ++b) two.push_back({devices[a], devices[b]});
    load(g.pairs, two);
    g.pairs_known = true;
  }
  if (algorithm == Algorithm::ring && kind != OpKind::broadcast && kind != OpKind::reduce) {
    // One aggregated step (fast fidelity): every ring edge carries its channels' shares; the step
    // lasts as long as the slowest edge.
    const auto own = plan(kind, algorithm, g.layout, 0, bytes, root, Fidelity::fast);
    if (own.empty()) return seconds_[key] = 0;
    const Step& st = own.front();
    const auto orders = ring_orders(g.layout);
    double sent = 0;
    for (const Transfer& t : st.sends) sent += t.bytes;
    // Each channel's flow on an edge moves its share; channels that take the same edge are separate
    // flows, already counted in the loads that give each its bandwidth.
    const double per_channel = sent / static_cast<double>(orders.size());
    double transfer = 0;
    for (const auto& o : orders)
      for (size_t i = 0; i < o.size(); ++i)
        transfer =
            std::max(transfer, per_channel / edge_bandwidth(g, g.devices[static_cast<size_t>(o[i])],
                                                            g.devices[static_cast<size_t>(o[(i + 1) % o.size()])],
                                                            Pattern::rings));
    return seconds_[key] = transfer + g.latency + step_costs_.after_transfers(st, g.latency, kind);
  }
  // Other algorithms: a step ends when its slowest member is done, every member's transfers at their
  // own flows' share.
  std::vector<double> steps;
  const auto plans = plan_group(kind, algorithm, g.layout, bytes, root, Fidelity::fast);
  for (int32_t me = 0; me < static_cast<int32_t>(size); ++me) {
    const auto& plan_of_me = plans[static_cast<size_t>(me)];
    if (steps.size() < plan_of_me.size()) steps.resize(plan_of_me.size(), 0);
    const int64_t here = g.devices[static_cast<size_t>(me)];
    for (size_t s = 0; s < plan_of_me.size(); ++s) {
      const Step& st = plan_of_me[s];
      double transfer = 0;
      for (const Transfer& t : st.sends)
        transfer =
            std::max(transfer, t.bytes / edge_bandwidth(g, here, g.devices[static_cast<size_t>(t.peer)], pattern, s));
      for (const Transfer& t : st.recvs)
        transfer =
            std::max(transfer, t.bytes / edge_bandwidth(g, g.devices[static_cast<size_t>(t.peer)], here, pattern, s));
      steps[s] = std::max(steps[s], transfer + g.latency + step_costs_.after_transfers(st, g.latency, kind));
    }
  }
  double total = 0;
  for (double s : steps) total += s;
  return seconds_[key] = total;
}

double CollectiveTimes::message_seconds(const workloads::Program& program, const workloads::PlacementMap& placement,
                                        int64_t rank, double bytes) {
  const AxisMask pipe = program.grid.mask("pipe");
  if (pipe == 0 || program.grid.group_size(pipe) <= 1) return 0;
  const Group& g = group(program, placement, rank, pipe);
  return (g.ring_bandwidth > 0 ? bytes / g.ring_bandwidth : 0) + g.latency;
}

}  // namespace paratwin::sim
