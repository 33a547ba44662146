#include "sim/phases.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace paratwin::sim {

using workloads::AxisMask;

int64_t PhaseFlows::transfers() const {
  int64_t n = 0;
  for (const PhaseFlow& f : flows) n += f.transfers;
  return n;
}

PhasePlanner::PhasePlanner(const workloads::Program& program, const workloads::PlacementMap& placement,
                           const topology::Topology& topology, GroupLayouts& layouts, const StepCosts& costs,
                           std::vector<int32_t> actor_of, bool one_copy_of_replica_links)
    : program_(program),
      placement_(placement),
      topology_(topology),
      layouts_(layouts),
      costs_(costs),
      actor_of_(std::move(actor_of)),
      pipe_axis_(program.grid.axis_index("pipe")) {
  for (size_t r = 0; r < actor_of_.size(); ++r) {
    const auto a = static_cast<size_t>(actor_of_[r]);
    if (ranks_of_.size() <= a) ranks_of_.resize(a + 1);
    ranks_of_[a].push_back(static_cast<int64_t>(r));
  }
  const int64_t per_node = topology_.machine().devices_per_node();
  replica_node_.resize(static_cast<size_t>((topology_.devices() + per_node - 1) / per_node));
  std::iota(replica_node_.begin(), replica_node_.end(), int64_t{0});
  if (one_copy_of_replica_links) find_replica_nodes();
}

void PhasePlanner::find_replica_nodes() {
  const int64_t per_node = topology_.machine().devices_per_node();
  const auto nodes = static_cast<int64_t>(replica_node_.size());
  const int data = program_.grid.axis_index("data");
  if (data < 0) return;
  // Every node's ranks belong to one actor; its first node stands for the others.
  std::vector<int64_t> first_node(ranks_of_.size(), nodes), actor_on(static_cast<size_t>(nodes), -1);
  std::vector<int64_t> rank_at(static_cast<size_t>(topology_.devices()), -1);
  for (size_t r = 0; r < actor_of_.size(); ++r) {
    const int64_t device = placement_.device_of(static_cast<int64_t>(r)), node = device / per_node;
    const int32_t a = actor_of_[r];
    int64_t& on = actor_on[static_cast<size_t>(node)];
    if (on >= 0 && on != a) return;  // ranks of several actors share a node: nothing is folded
    on = a;
    first_node[static_cast<size_t>(a)] = std::min(first_node[static_cast<size_t>(a)], node);
    rank_at[static_cast<size_t>(device)] = static_cast<int64_t>(r);
  }
  // Copies only: the rank at every device of a node differs from the one at the same device of the
  // standing node in its data-parallel coordinate alone.
  std::vector<int64_t> candidate(replica_node_);
  for (int64_t n = 0; n < nodes; ++n) {
    const int64_t a = actor_on[static_cast<size_t>(n)];
    if (a < 0) continue;
    const int64_t m = first_node[static_cast<size_t>(a)];
    for (int64_t i = 0; i < per_node; ++i) {
      const int64_t r = rank_at[static_cast<size_t>(n * per_node + i)],
                    q = rank_at[static_cast<size_t>(m * per_node + i)];
      if ((r < 0) != (q < 0)) return;
      if (r >= 0 && program_.grid.with_coord(r, data, 0) != program_.grid.with_coord(q, data, 0)) return;
    }
    candidate[static_cast<size_t>(n)] = m;
  }
  replica_node_ = std::move(candidate);
  folds_replicas_ =
      std::any_of(replica_node_.begin(), replica_node_.end(), [n = int64_t{0}](int64_t m) mutable { return m != n++; });
}

void PhasePlanner::reduce(std::vector<uint32_t>& resources) const {
  if (!folds_replicas_) return;
  std::sort(resources.begin(), resources.end());
  // Count per resource, then per standing resource the largest count among its copies.
  std::map<uint32_t, int64_t> counts;
  for (size_t i = 0; i < resources.size();) {
    size_t j = i;
    while (j < resources.size() && resources[j] == resources[i]) ++j;
    const uint32_t id = resources[i];
    const int64_t node = topology_.node_of(id);
    const auto n = static_cast<int64_t>(j - i);
    if (node < 0) {
      counts[id] += n;
    } else {
      int64_t& c = counts[topology_.on_node(id, replica_node_[static_cast<size_t>(node)])];
      c = std::max(c, n);
    }
    i = j;
  }
  resources.clear();
  for (const auto& [id, n] : counts) resources.insert(resources.end(), static_cast<size_t>(n), id);
}

const PhasePlanner::Components& PhasePlanner::components(AxisMask mask) {
  const auto it = components_.find(mask);
  if (it != components_.end()) return it->second;
  // Union-find over actors: each rank joins the actor of its group's first member.
  std::vector<int32_t> parent(ranks_of_.size());
  std::iota(parent.begin(), parent.end(), 0);
  const auto find = [&](int32_t x) {
    while (parent[static_cast<size_t>(x)] != x)
      x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  };
  for (size_t r = 0; r < actor_of_.size(); ++r) {
    const int32_t a = find(actor_of_[r]);
    const int32_t b = find(actor_of(program_.grid.group_member(static_cast<int64_t>(r), mask, 0)));
    if (a != b) parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
  }
  Components c;
  c.of_actor.assign(ranks_of_.size(), -1);
  std::map<int32_t, int32_t> number;  // root -> component, numbered by their smallest actor
  for (size_t a = 0; a < ranks_of_.size(); ++a) {
    const auto [at, fresh] = number.emplace(find(static_cast<int32_t>(a)), static_cast<int32_t>(c.actors.size()));
    if (fresh) c.actors.emplace_back();
    c.of_actor[a] = at->second;
    c.actors[static_cast<size_t>(at->second)].push_back(static_cast<int32_t>(a));
  }
  return components_[mask] = std::move(c);
}

int32_t PhasePlanner::component(int32_t actor, AxisMask mask) {
  return components(mask).of_actor[static_cast<size_t>(actor)];
}

int32_t PhasePlanner::component_size(int32_t component, AxisMask mask) {
  return static_cast<int32_t>(components(mask).actors[static_cast<size_t>(component)].size());
}

// SimGrid adds a route's resources one entry at a time, each time searching the variable's list of
// the distinct ones from its start: the most repeated (a group's global links, crossed by many
// transfers) go first, where that search ends at once.
void PhasePlanner::most_repeated_first(std::vector<uint32_t>& resources) {
  std::sort(resources.begin(), resources.end());
  std::vector<std::pair<size_t, uint32_t>> counts;  // (entries, resource)
  for (size_t i = 0; i < resources.size();) {
    size_t j = i;
    while (j < resources.size() && resources[j] == resources[i]) ++j;
    counts.emplace_back(j - i, resources[i]);
    i = j;
  }
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  resources.clear();
  for (const auto& [n, id] : counts) resources.insert(resources.end(), n, id);
}

PhaseFlows PhasePlanner::flows(const std::vector<std::tuple<int64_t, int64_t, double>>& transfers) const {
  // Sizes that are whole multiples of a class's size join it; others open a class of their own.
  std::vector<double> sizes;
  for (const auto& [from, to, bytes] : transfers)
    if (bytes > 0) sizes.push_back(bytes);
  std::sort(sizes.begin(), sizes.end());
  std::vector<double> classes;
  const auto multiple = [](double bytes, double unit) {
    const double k = std::round(bytes / unit);
    return k >= 1 && std::abs(bytes - k * unit) <= 1e-9 * bytes ? static_cast<int64_t>(k) : 0;
  };
  for (double b : sizes)
    if (std::none_of(classes.begin(), classes.end(), [&](double unit) { return multiple(b, unit) > 0; }))
      classes.push_back(b);
  // One flow per size class and pair of nodes: SimGrid's solver revisits every constraint of a
  // variable each time it reaches the variable again through another of them, so a variable's cost
  // grows with the square of its distinct links; a node pair's transfers share most of theirs.
  const int64_t per_node = topology_.machine().devices_per_node();
  std::map<std::tuple<size_t, int64_t, int64_t>, PhaseFlow> by_pair;
  topology::Route route;
  for (const auto& [from, to, bytes] : transfers) {
    if (bytes <= 0) continue;
    size_t c = 0;
    int64_t k = 0;
    for (; c < classes.size(); ++c)
      if ((k = multiple(bytes, classes[c])) > 0) break;
    const int64_t a = placement_.device_of(from), b = placement_.device_of(to);
    PhaseFlow& f = by_pair[{c, replica_node_[static_cast<size_t>(a / per_node)],
                            replica_node_[static_cast<size_t>(b / per_node)]}];
    f.bytes = classes[c];
    topology_.route(a, b, route);
    for (int64_t i = 0; i < k; ++i)
      f.resources.insert(f.resources.end(), route.resources.begin(), route.resources.end());
    f.latency = std::max(f.latency, route.latency);
    f.transfers += k;
  }
  // Neighbouring pairs of a class merge into flows of about kResourcesPerFlow route entries each.
  // SimGrid's solver revisits every constraint of a variable each time it reaches the variable again
  // through another of them, so a variable costs the square of its links: smaller flows are cheaper
  // each time a solve reaches them. But every flow that ends is a solve of its own: a phase has at
  // most kFewFlows flows, or as many as keep them under kResourcesPerLargeFlow entries.
  std::vector<std::vector<PhaseFlow*>> pairs(classes.size());
  std::vector<size_t> resources(classes.size(), 0);
  for (auto& [key, f] : by_pair) {
    reduce(f.resources);
    pairs[std::get<0>(key)].push_back(&f);
    resources[std::get<0>(key)] += f.resources.size();
  }
  const size_t budget = std::max<size_t>(1, kMaxFlows / std::max<size_t>(1, classes.size()));
  PhaseFlows out;
  for (size_t c = 0; c < classes.size(); ++c) {
    const auto& of_class = pairs[c];
    const size_t wanted =
        std::min((resources[c] + kResourcesPerFlow - 1) / kResourcesPerFlow,
                 std::max(kFewFlows, (resources[c] + kResourcesPerLargeFlow - 1) / kResourcesPerLargeFlow));
    const size_t slots = std::clamp<size_t>(wanted, 1, std::min(budget, of_class.size())), first = out.flows.size();
    out.flows.resize(first + slots);
    for (size_t i = 0; i < of_class.size(); ++i) {
      PhaseFlow& into = out.flows[first + i * slots / of_class.size()];
      const PhaseFlow& f = *of_class[i];
      into.resources.insert(into.resources.end(), f.resources.begin(), f.resources.end());
      into.latency = std::max(into.latency, f.latency);
      into.bytes = f.bytes;
      into.transfers += f.transfers;
    }
  }
  for (PhaseFlow& f : out.flows) most_repeated_first(f.resources);
  return out;
}

const std::vector<PhaseFlows>& PhasePlanner::collective(int32_t component, AxisMask mask, workloads::OpKind kind,
                                                        Algorithm algorithm, double bytes, int32_t root) {
  const auto key = std::make_tuple(component, mask, static_cast<int>(kind), static_cast<int>(algorithm), bytes, root);
  const auto it = collectives_.find(key);
  if (it != collectives_.end()) return it->second;
  const auto& grid = program_.grid;
  std::vector<std::vector<std::tuple<int64_t, int64_t, double>>> per_step;
  std::vector<int64_t> firsts;  // groups already planned
  for (int32_t actor : components(mask).actors[static_cast<size_t>(component)])
    for (int64_t rank : ranks_of(actor)) {
      const int64_t first = grid.group_member(rank, mask, 0);
      if (std::find(firsts.begin(), firsts.end(), first) != firsts.end()) continue;
      firsts.push_back(first);
      const auto plans = costs_.plan_group(kind, algorithm, layouts_.of(rank, mask, kind), bytes, root, Fidelity::fast);
      if (per_step.empty() && !plans.empty()) per_step.resize(plans.front().size());
      for (size_t me = 0; me < plans.size(); ++me) {
        if (plans[me].size() != per_step.size())
          throw std::logic_error(std::string("members of a ") + workloads::to_string(kind) + " over group \"" +
                                 grid.mask_name(mask) + "\" plan different numbers of steps");
        const int64_t from = grid.group_member(first, mask, static_cast<int64_t>(me));
        for (size_t k = 0; k < plans[me].size(); ++k)
          for (const Transfer& t : plans[me][k].sends)
            per_step[k].emplace_back(from, grid.group_member(first, mask, t.peer), t.bytes);
      }
    }
  std::vector<PhaseFlows> out;
  out.reserve(per_step.size());
  for (const auto& transfers : per_step) out.push_back(flows(transfers));
  return collectives_[key] = std::move(out);
}

const PhaseFlows& PhasePlanner::message(int32_t from, int64_t to_stage, double bytes) {
  const auto key = std::make_tuple(from, to_stage, bytes);
  const auto it = messages_.find(key);
  if (it != messages_.end()) return it->second;
  std::vector<std::tuple<int64_t, int64_t, double>> transfers;
  for (int64_t rank : ranks_of(from))
    transfers.emplace_back(rank, program_.grid.with_coord(rank, pipe_axis_, to_stage), bytes);
  return messages_[key] = flows(transfers);
}

}  // namespace paratwin::sim
