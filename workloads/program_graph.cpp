#include "workloads/program_graph.hpp"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <map>
#include <tuple>

namespace paratwin::workloads {

namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;

std::string where(const Role& role, uint32_t i) {
  const Op& op = role.ops[i];
  return role.name + " op " + std::to_string(i) + " (" + to_string(op.kind) + " " + op.name + ", " +
         to_string(op.phase) + ", layer " + std::to_string(op.layer) + ", micro-batch " +
         std::to_string(op.micro_batch) + ")";
}

void check_local(const Role& role) {
  for (uint32_t i = 0; i < role.ops.size(); ++i) {
    const Op& op = role.ops[i];
    if (op.dep_begin + op.dep_count > role.deps.size())
      throw ProgramError(where(role, i) + ": dependency range out of bounds");
    for (uint32_t k = 0; k < op.dep_count; ++k)
      if (role.deps[op.dep_begin + k] >= i)
        throw ProgramError(where(role, i) + ": depends on a later op " + std::to_string(role.deps[op.dep_begin + k]));
    if (is_collective(op.kind) && op.group == 0) throw ProgramError(where(role, i) + ": collective without a group");
    if (!(op.bytes >= 0) || !(op.flops >= 0)) throw ProgramError(where(role, i) + ": negative size");
  }
}

struct MessageKey {
  int32_t from, to;
  uint64_t tag;
  auto operator<=>(const MessageKey&) const = default;
};

// Matches every send with the receive of the same tag on its peer; returns the pairs.
std::vector<std::pair<OpRef, OpRef>> match_messages(const Program& p) {
  std::map<MessageKey, OpRef> sends, recvs;
  for (int32_t r = 0; r < static_cast<int32_t>(p.roles.size()); ++r) {
    const Role& role = p.roles[static_cast<size_t>(r)];
    for (uint32_t i = 0; i < role.ops.size(); ++i) {
      const Op& op = role.ops[i];
      if (!is_p2p(op.kind)) continue;
      if (op.peer_stage < 0 || op.peer_stage >= static_cast<int32_t>(p.roles.size()))
        throw ProgramError(where(role, i) + ": peer stage " + std::to_string(op.peer_stage) + " does not exist");
      const bool send = op.kind == OpKind::send;
      MessageKey key{send ? r : op.peer_stage, send ? op.peer_stage : r, op.tag};
      auto& table = send ? sends : recvs;
      if (!table.emplace(key, OpRef{r, i}).second)
        throw ProgramError(where(role, i) + ": a second " + to_string(op.kind) + " with tag " + std::to_string(op.tag));
    }
  }
  std::vector<std::pair<OpRef, OpRef>> pairs;
  for (const auto& [key, s] : sends) {
    auto it = recvs.find(key);
    const Role& role = p.roles[static_cast<size_t>(s.role)];
    if (it == recvs.end())
      throw ProgramError(where(role, s.op) + ": no matching recv on stage " + std::to_string(key.to));
    const Op& a = role.ops[s.op];
    const Op& b = p.roles[static_cast<size_t>(it->second.role)].ops[it->second.op];
    if (a.bytes != b.bytes)
      throw ProgramError(where(role, s.op) + ": sends " + std::to_string(a.bytes) + " bytes but the recv expects " +
                         std::to_string(b.bytes));
    pairs.push_back({s, it->second});
    recvs.erase(it);
  }
  if (!recvs.empty()) {
    const auto& [key, r] = *recvs.begin();
    throw ProgramError(where(p.roles[static_cast<size_t>(r.role)], r.op) + ": no matching send from stage " +
                       std::to_string(key.from));
  }
  return pairs;
}

// Collectives over a group that spans several roles must be issued in the same order with the same
// kind and size by every role of the group.
void check_collectives(const Program& p) {
  const int pipe = p.grid.axis_index("pipe");
  if (pipe < 0 || p.roles.size() < 2) return;
  const AxisMask pipe_mask = AxisMask{1} << pipe;
  auto sequence = [&](const Role& role, AxisMask group) {
    std::vector<std::tuple<OpKind, double, int32_t>> seq;
    for (const Op& op : role.ops)
      if (is_collective(op.kind) && op.group == group) seq.emplace_back(op.kind, op.bytes, op.root);
    return seq;
  };
  std::vector<AxisMask> spanning;
  for (const Role& role : p.roles)
    for (const Op& op : role.ops)
      if (is_collective(op.kind) && (op.group & pipe_mask) &&
          std::find(spanning.begin(), spanning.end(), op.group) == spanning.end())
        spanning.push_back(op.group);
  for (AxisMask g : spanning) {
    const auto reference = sequence(p.roles[0], g);
    for (const Role& role : p.roles)
      if (sequence(role, g) != reference)
        throw ProgramError(role.name + ": collectives over " + p.grid.mask_name(g) +
                           " differ from stage 0's (a group spans both)");
  }
}

// One vertex per op, a matched send and receive sharing one vertex; edges for explicit
// dependencies and for stream order. A compressed sparse row graph keeps millions of ops compact.
struct GlobalGraph {
  Graph g;
  std::vector<size_t> base;       // first flattened op index of each role
  std::vector<size_t> vertex_of;  // flattened op index -> vertex
  std::vector<size_t> op_of;      // vertex -> a flattened op index it stands for
  std::vector<size_t> partner;    // vertex -> the matched message's other end, or SIZE_MAX

  OpRef ref(size_t flat) const {
    const auto it = std::upper_bound(base.begin(), base.end(), flat) - 1;
    return {static_cast<int32_t>(it - base.begin()), static_cast<uint32_t>(flat - *it)};
  }
};

GlobalGraph build_graph(const Program& p, const std::vector<std::pair<OpRef, OpRef>>& pairs) {
  GlobalGraph G;
  size_t n = 0;
  for (const Role& role : p.roles) {
    G.base.push_back(n);
    n += role.ops.size();
  }
  // A receive takes its send's vertex; every other op gets the next free one.
  std::vector<size_t> merged_into(n, SIZE_MAX);
  for (const auto& [s, r] : pairs)
    merged_into[G.base[static_cast<size_t>(r.role)] + r.op] = G.base[static_cast<size_t>(s.role)] + s.op;
  G.vertex_of.assign(n, SIZE_MAX);
  for (size_t i = 0; i < n; ++i)
    if (merged_into[i] == SIZE_MAX) {
      G.vertex_of[i] = G.op_of.size();
      G.op_of.push_back(i);
    }
  G.partner.assign(G.op_of.size(), SIZE_MAX);
  for (size_t i = 0; i < n; ++i)
    if (merged_into[i] != SIZE_MAX) {
      G.vertex_of[i] = G.vertex_of[merged_into[i]];
      G.partner[G.vertex_of[i]] = i;
    }
  std::vector<std::pair<size_t, size_t>> edges;
  size_t deps = 0;
  for (const Role& role : p.roles) deps += role.deps.size();
  edges.reserve(deps + n);
  for (size_t r = 0; r < p.roles.size(); ++r) {
    const Role& role = p.roles[r];
    const size_t b = G.base[r];
    size_t last_on_stream[kStreams];
    std::fill(std::begin(last_on_stream), std::end(last_on_stream), SIZE_MAX);
    for (uint32_t i = 0; i < role.ops.size(); ++i) {
      const Op& op = role.ops[i];
      const size_t v = G.vertex_of[b + i];
      for (uint32_t k = 0; k < op.dep_count; ++k) edges.emplace_back(G.vertex_of[b + role.deps[op.dep_begin + k]], v);
      size_t& prev = last_on_stream[static_cast<int>(op.stream)];
      if (prev != SIZE_MAX) edges.emplace_back(G.vertex_of[b + prev], v);
      prev = i;
    }
  }
  G.g = Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), G.op_of.size());
  return G;
}

std::vector<size_t> topo(const GlobalGraph& G) {
  std::vector<size_t> order;
  order.reserve(G.op_of.size());
  try {
    boost::topological_sort(G.g, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    throw ProgramError(
        "the op graph has a cycle: the pipeline schedule, stream order and matched messages would "
        "deadlock");
  }
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace

void validate_program(const Program& p) {
  for (const Role& role : p.roles) check_local(role);
  const auto pairs = match_messages(p);
  check_collectives(p);
  topo(build_graph(p, pairs));
}

CriticalPath critical_path(const Program& p, const std::function<double(const Role&, const Op&)>& cost) {
  const auto pairs = match_messages(p);
  const GlobalGraph G = build_graph(p, pairs);
  const auto order = topo(G);
  const size_t n = G.op_of.size();
  auto op_cost = [&](size_t flat) {
    const OpRef r = G.ref(flat);
    const Role& role = p.roles[static_cast<size_t>(r.role)];
    return cost(role, role.ops[r.op]);
  };
  // Relax along out-edges in topological order: start[v] is the latest finish of its predecessors.
  std::vector<double> start(n, 0), finish(n, 0);
  std::vector<size_t> prev(n, SIZE_MAX);
  size_t best = SIZE_MAX;
  for (size_t v : order) {
    double w = op_cost(G.op_of[v]);
    if (G.partner[v] != SIZE_MAX) w = std::max(w, op_cost(G.partner[v]));
    finish[v] = start[v] + w;
    if (best == SIZE_MAX || finish[v] > finish[best]) best = v;
    for (auto [it, end] = boost::out_edges(v, G.g); it != end; ++it) {
      const size_t u = boost::target(*it, G.g);
      if (prev[u] == SIZE_MAX || finish[v] > start[u]) {
        start[u] = finish[v];
        prev[u] = v;
      }
    }
  }
  CriticalPath out;
  if (best == SIZE_MAX) return out;
  out.length = finish[best];
  for (size_t v = best; v != SIZE_MAX; v = prev[v]) out.ops.push_back(G.ref(G.op_of[v]));
  std::reverse(out.ops.begin(), out.ops.end());
  return out;
}

std::vector<uint32_t> topological_order(const Role& role) {
  Program single;
  single.roles.push_back(role);
  for (auto& op : single.roles[0].ops)
    if (is_p2p(op.kind)) op.kind = OpKind::elementwise;  // messages are matched across roles only
  const GlobalGraph G = build_graph(single, {});
  std::vector<uint32_t> out;
  for (size_t v : topo(G)) out.push_back(static_cast<uint32_t>(G.op_of[v]));
  return out;
}

}  // namespace paratwin::workloads
