#include "sim/analytical_collectives.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/group_layouts.hpp"

namespace paratwin::sim {

using workloads::AxisMask;
using workloads::OpKind;

CollectiveTimes::CollectiveTimes(const topology::Topology& topology, std::string library, bool placement_aware,
                                 std::map<OpKind, Algorithm> forced)
    : topology_(topology),
      library_(std::move(library)),
      placement_aware_(placement_aware),
      step_costs_(StepCosts::of(topology.machine(), library_)),
      tuner_(topology, library_, std::move(forced)) {
  // [singh2025dissertation] eq. 5.7's β_inter: what one ring crossing between two nodes gets.
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

double CollectiveTimes::stepped_bandwidth(Group& g, Algorithm algorithm, OpKind kind, int32_t root, int64_t from,
                                          int64_t to, size_t step) {
  if (!placement_aware_) return flat_bandwidth_;
  auto [it, added] = g.stepped.try_emplace(std::make_tuple(static_cast<int>(algorithm), static_cast<int>(kind), root));
  Group::Stepped& stepped = it->second;
  if (added) {
    // Every group's flows of one step at once, each in its own direction.
    for (const Shape& other : g.shapes) {
      const auto plans = plan_group(kind, algorithm, other.layout, 1, root, Fidelity::fast);
      size_t steps = 0;  // members may take different numbers of steps (a binomial tree's leaves)
      for (const auto& p : plans) steps = std::max(steps, p.size());
      if (stepped.loads.size() < steps) stepped.loads.resize(steps);
      for (size_t s = 0; s < steps; ++s) {
        std::vector<std::pair<int64_t, int64_t>> edges;
        for (const auto& devices : other.groups)
          for (size_t me = 0; me < devices.size(); ++me) {
            if (s >= plans[me].size()) continue;
            for (const Transfer& t : plans[me][s].sends)
              edges.emplace_back(devices[me], devices[static_cast<size_t>(t.peer)]);
          }
        load_directed(stepped.loads[s], edges);
      }
    }
  }
  if (stepped.loads.empty()) return flat_bandwidth_;
  step = std::min(step, stepped.loads.size() - 1);
  const auto key = std::make_tuple(from, to, step);
  if (const auto found = stepped.edges.find(key); found != stepped.edges.end()) return found->second;
  double bandwidth = std::numeric_limits<double>::infinity();
  for (uint32_t id : topology_.route(from, to).resources) {
    const auto l = stepped.loads[step].find(id);
    const double flows = l == stepped.loads[step].end() ? 1.0 : static_cast<double>(l->second);
    bandwidth = std::min(bandwidth, topology_.resource(id).bandwidth / flows);
  }
  return stepped.edges[key] = bandwidth;
}

CollectiveTimes::Group& CollectiveTimes::group(const workloads::Program& program,
                                               const workloads::PlacementMap& placement, int64_t rank, AxisMask mask,
                                               bool vendor) {
  auto key = structure(placement, mask);
  if (vendor) key.push_back(0);  // structures hold runs of 2 or more (group axes negative): 0 marks the vendor's layout
  const auto found = groups_.find(key);
  if (found != groups_.end()) return found->second;
  const auto& grid = program.grid;
  const int64_t per_node = topology_.machine().devices_per_node();
  const int64_t size = grid.group_size(mask);
  Group g;
  GroupLayouts layouts(program, placement, topology_, library_);
  // Shapes in order of their first group, the rank's own group's shape first.
  std::map<std::vector<int64_t>, size_t> shape_of;
  const auto add = [&](int64_t first) {
    std::vector<int64_t> devices, signature;
    for (int64_t k = 0; k < size; ++k) devices.push_back(placement.device_of(grid.group_member(first, mask, k)));
    for (const int64_t d : devices) {
      signature.push_back(d / per_node - devices.front() / per_node);
      signature.push_back(d % per_node);
    }
    const auto [it, added] = shape_of.emplace(std::move(signature), g.shapes.size());
    if (added) {
      Shape& shape = g.shapes.emplace_back();
      shape.layout = vendor ? layouts.vendor_of(first, mask) : layouts.of(first, mask);
      shape.devices = devices;
    }
    g.shapes[it->second].groups.push_back(std::move(devices));
  };
  const int64_t own = grid.group_member(rank, mask, 0);
  add(own);
  for (int64_t r = 0; r < grid.size(); ++r)
    if (r != own && grid.index_in_group(r, mask) == 0) add(r);

  std::vector<std::vector<int64_t>> rings;
  for (Shape& shape : g.shapes) {
    const auto orders = ring_orders(shape.layout);
    for (const auto& o : orders)
      for (size_t i = 0; i < o.size(); ++i)
        shape.latency = std::max(shape.latency, topology_
                                                    .path(shape.devices[static_cast<size_t>(o[i])],
                                                          shape.devices[static_cast<size_t>(o[(i + 1) % o.size()])])
                                                    .latency);
    // Every group of these axes runs its rings at once, as the layers' collectives do.
    for (const auto& devices : shape.groups)
      for (const auto& o : orders) {
        std::vector<int64_t> ring;
        for (int32_t k : o) ring.push_back(devices[static_cast<size_t>(k)]);
        rings.push_back(std::move(ring));
      }
  }
  if (placement_aware_) load(g.rings, rings);
  g.ring_bandwidth = std::numeric_limits<double>::infinity();
  for (Shape& shape : g.shapes) {
    shape.ring_bandwidth = flat_bandwidth_;
    if (placement_aware_) {
      shape.ring_bandwidth = std::numeric_limits<double>::infinity();
      for (const auto& o : ring_orders(shape.layout))
        for (size_t i = 0; i < o.size(); ++i)
          shape.ring_bandwidth =
              std::min(shape.ring_bandwidth,
                       edge_bandwidth(g, shape.devices[static_cast<size_t>(o[i])],
                                      shape.devices[static_cast<size_t>(o[(i + 1) % o.size()])], Pattern::rings));
    }
    g.ring_bandwidth = std::min(g.ring_bandwidth, shape.ring_bandwidth);
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
  Group& g = group(program, placement, rank, mask, library_running(kind, library_, topology_.machine()) != library_);
  // The collective of every group runs at once; the slowest shape's groups finish last.
  double slowest = 0;
  for (const Shape& shape : g.shapes) slowest = std::max(slowest, shape_seconds(g, shape, kind, bytes, root));
  return seconds_[key] = slowest;
}

namespace {

// How `algorithm`'s flows load the network for `kind` (its registration); a ring's chains (broadcast,
// reduce) run step by step under their own flows.
AnalyticalLoads loads_of(Algorithm algorithm, OpKind kind) {
  const auto& registered = spec(algorithm);
  if (!registered.loads)
    throw std::logic_error(std::string("the analytical model does not know how algorithm ") + registered.name +
                           " loads the network: its AlgorithmSpec names no AnalyticalLoads");
  if (*registered.loads == AnalyticalLoads::ring_channels && (kind == OpKind::broadcast || kind == OpKind::reduce))
    return AnalyticalLoads::own_steps;
  return *registered.loads;
}

}  // namespace

CollectiveTimes::Pattern CollectiveTimes::pattern_of(AnalyticalLoads loads) {
  switch (loads) {  // no default: a new AnalyticalLoads the model does not handle is a warning (-Wswitch)
    case AnalyticalLoads::ring_channels:
    case AnalyticalLoads::own_steps:
      return Pattern::rings;
    case AnalyticalLoads::pairs:
      return Pattern::pairs;
    case AnalyticalLoads::tree_steps:
      return Pattern::trees;
  }
  return Pattern::rings;
}

double CollectiveTimes::shape_seconds(Group& g, const Shape& shape, OpKind kind, double bytes, int32_t root) {
  const Algorithm algorithm = tuner_.choose(kind, shape.layout, bytes);
  const AnalyticalLoads loads = loads_of(algorithm, kind);
  const Pattern pattern = pattern_of(loads);
  const bool pairs = pattern == Pattern::pairs;
  if (pattern == Pattern::trees && !g.trees_known && placement_aware_) {
    // Every group's tree edges of one step at once, in the direction they carry data in that step
    // (children to parents up, parents to children down): a member whose two children send at once
    // shares its links between them, while the other direction of the links stays free.
    for (const Shape& other : g.shapes) {
      const auto trees = plan_group(OpKind::all_reduce, Algorithm::tree, other.layout, 1, 0, Fidelity::fast);
      if (g.trees.size() < trees.front().size()) g.trees.resize(trees.front().size());
      for (size_t step = 0; step < trees.front().size(); ++step) {
        std::vector<std::pair<int64_t, int64_t>> edges;
        for (const auto& devices : other.groups)
          for (size_t me = 0; me < devices.size(); ++me)
            for (const Transfer& t : trees[me][step].sends)
              edges.emplace_back(devices[me], devices[static_cast<size_t>(t.peer)]);
        load_directed(g.trees[step], edges);
      }
    }
    if (g.trees.empty()) g.trees.resize(1);
    g.trees_known = true;
  }
  if (pairs && !g.pairs_known && placement_aware_) {
    // All-to-all: every member of every group sends to every other member at once (routed as
    // two-member rings, one per pair). Only expert groups exchange, and they are small.
    std::vector<std::vector<int64_t>> two;
    for (const Shape& other : g.shapes)
      for (const auto& devices : other.groups)
        for (size_t a = 0; a < devices.size(); ++a)
          for (size_t b = a + 1; b < devices.size(); ++b) two.push_back({devices[a], devices[b]});
    load(g.pairs, two);
    g.pairs_known = true;
  }
  const auto& devices = shape.devices;
  if (loads == AnalyticalLoads::ring_channels) {
    // One aggregated step (fast fidelity): every ring edge carries its channels' shares; the step
    // lasts as long as the slowest edge.
    const auto own = step_costs_.plan(kind, algorithm, shape.layout, 0, bytes, root, Fidelity::fast);
    if (own.empty()) return 0;
    const Step& st = own.front();
    const auto orders = ring_orders(shape.layout);
    double sent = 0;
    for (const Transfer& t : st.sends) sent += t.bytes;
    // Each channel's flow on an edge moves its share; channels that take the same edge are separate
    // flows, already counted in the loads that give each its bandwidth.
    const double per_channel = sent / static_cast<double>(orders.size());
    double transfer = 0;
    for (const auto& o : orders)
      for (size_t i = 0; i < o.size(); ++i)
        transfer = std::max(transfer, per_channel / edge_bandwidth(g, devices[static_cast<size_t>(o[i])],
                                                                   devices[static_cast<size_t>(o[(i + 1) % o.size()])],
                                                                   Pattern::rings));
    return transfer + shape.latency + step_costs_.after_transfers(st, shape.latency, kind);
  }
  // Other algorithms: a step ends when its slowest member is done, every member's transfers at their
  // own flows' share.
  std::vector<double> steps;
  const auto plans = step_costs_.plan_group(kind, algorithm, shape.layout, bytes, root, Fidelity::fast);
  for (int32_t me = 0; me < shape.layout.size(); ++me) {
    const auto& plan_of_me = plans[static_cast<size_t>(me)];
    if (steps.size() < plan_of_me.size()) steps.resize(plan_of_me.size(), 0);
    const int64_t here = devices[static_cast<size_t>(me)];
    for (size_t s = 0; s < plan_of_me.size(); ++s) {
      const Step& st = plan_of_me[s];
      const auto bandwidth = [&](int64_t from, int64_t to) {
        return loads == AnalyticalLoads::own_steps ? stepped_bandwidth(g, algorithm, kind, root, from, to, s)
                                                   : edge_bandwidth(g, from, to, pattern, s);
      };
      double transfer = 0;
      for (const Transfer& t : st.sends)
        transfer = std::max(transfer, t.bytes / bandwidth(here, devices[static_cast<size_t>(t.peer)]));
      for (const Transfer& t : st.recvs)
        transfer = std::max(transfer, t.bytes / bandwidth(devices[static_cast<size_t>(t.peer)], here));
      steps[s] = std::max(steps[s], transfer + shape.latency + step_costs_.after_transfers(st, shape.latency, kind));
    }
  }
  double total = 0;
  for (double s : steps) total += s;
  return total;
}

double CollectiveTimes::message_seconds(const workloads::Program& program, const workloads::PlacementMap& placement,
                                        int64_t rank, double bytes) {
  const AxisMask pipe = program.grid.mask("pipe");
  if (pipe == 0 || program.grid.group_size(pipe) <= 1) return 0;
  const Group& g = group(program, placement, rank, pipe);
  double slowest = 0;
  for (const Shape& shape : g.shapes)
    slowest = std::max(slowest, (shape.ring_bandwidth > 0 ? bytes / shape.ring_bandwidth : 0) + shape.latency);
  return slowest;
}

}  // namespace paratwin::sim
