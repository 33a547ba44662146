#include "reports/collective_listing.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "reports/lower_report.hpp"

namespace paratwin::reports {

// A report is of the workload model's programs, roles and ops: their names read unqualified here.
using namespace workloads;

namespace {

bool listed(const Op& op, bool every) {
  if (!is_collective(op.kind)) return false;
  if (every) return true;
  return (op.kind == OpKind::all_gather || op.kind == OpKind::reduce_scatter) &&
         (op.stream == Stream::shard || op.stream == Stream::data);
}

std::string layer_label(int32_t l) {
  if (l == kLayerEmbedding) return "embedding";
  if (l == kLayerLogits) return "logits";
  if (l == kLayerNone) return "-";
  return std::to_string(l);
}

// "0-3,6,embedding": consecutive layers as ranges, then the labelled non-layers.
std::string layer_ranges(const std::set<int32_t>& layers) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ",") + s; };
  std::vector<int32_t> real;
  for (int32_t l : layers)
    if (l >= 0) real.push_back(l);
  // Every k-th layer (MoE layers, one kind of two): "1,3..23".
  if (real.size() >= 3 && real[1] - real[0] > 1) {
    const int32_t step = real[1] - real[0];
    bool even = true;
    for (size_t i = 1; i < real.size(); ++i) even = even && real[i] - real[i - 1] == step;
    if (even) {
      add(std::to_string(real[0]) + "," + std::to_string(real[1]) + ".." + std::to_string(real.back()));
      real.clear();
    }
  }
  for (size_t i = 0; i < real.size();) {
    size_t j = i;
    while (j + 1 < real.size() && real[j + 1] == real[j] + 1) ++j;
    add(j == i ? std::to_string(real[i]) : std::to_string(real[i]) + "-" + std::to_string(real[j]));
    i = j + 1;
  }
  for (int32_t l : layers)
    if (l < 0) add(layer_label(l));
  return out;
}

}  // namespace

std::vector<ListedCollective> list_collectives(const Program& p, const Role& r, bool every) {
  using Key = std::tuple<OpKind, std::string, Phase, AxisMask, double>;
  std::map<Key, size_t> index;
  std::vector<ListedCollective> rows;
  std::vector<std::set<int32_t>> layers;
  for (const auto& op : r.ops) {
    if (!listed(op, every)) continue;
    const Key key{op.kind, op.name, op.phase, op.group, op.bytes};
    auto [it, fresh] = index.emplace(key, rows.size());
    if (fresh) {
      ListedCollective c;
      c.kind = op.kind;
      c.name = op.name;
      c.phase = op.phase;
      c.group = p.grid.mask_name(op.group);
      c.group_size = p.grid.group_size(op.group);
      c.bytes = op.bytes;
      rows.push_back(c);
      layers.emplace_back();
    }
    ++rows[it->second].count;
    layers[it->second].insert(op.layer);
  }
  for (size_t i = 0; i < rows.size(); ++i) rows[i].layers = layer_ranges(layers[i]);
  return rows;
}

std::string format_collective_listing(const Program& p, int64_t only_role, bool every) {
  std::ostringstream o;
  for (const auto& r : p.roles) {
    if (only_role >= 0 && r.stage != only_role) continue;
    const auto rows = list_collectives(p, r, every);
    if (rows.empty()) continue;
    o << "\n"
      << (every ? "collectives" : "all-gathers and reduce-scatters of sharded weights and gradients") << " in "
      << r.name << " (" << r.ranks << " ranks), per rank per iteration:\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %-28s %-10s %-16s %7s %11s %11s  %s\n", "kind", "name", "phase", "layers",
                  "count", "bytes each", "total", "group (size)");
    o << line;
    // Per kind, in the order the kinds first appear.
    std::vector<std::pair<OpKind, std::pair<int64_t, double>>> totals;
    for (const auto& c : rows) {
      std::snprintf(line, sizeof line, "  %-14s %-28s %-10s %-16s %7lld %11s %11s  %s (%lld)\n", to_string(c.kind),
                    c.name.c_str(), to_string(c.phase), c.layers.c_str(), static_cast<long long>(c.count),
                    bytes_text(c.bytes).c_str(), bytes_text(c.total()).c_str(), c.group.c_str(),
                    static_cast<long long>(c.group_size));
      o << line;
      auto t = std::find_if(totals.begin(), totals.end(), [&](const auto& k) { return k.first == c.kind; });
      if (t == totals.end()) t = totals.insert(totals.end(), {c.kind, {0, 0.0}});
      t->second.first += c.count;
      t->second.second += c.total();
    }
    o << "  total:";
    bool first = true;
    for (const auto& [kind, t] : totals) {
      o << (first ? " " : "; ") << to_string(kind) << " " << t.first << " calls, " << bytes_text(t.second);
      first = false;
    }
    o << "\n";
  }
  return o.str();
}

nlohmann::json collective_listing_json(const Program& p, bool every) {
  nlohmann::json roles = nlohmann::json::array();
  for (const auto& r : p.roles) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& c : list_collectives(p, r, every))
      rows.push_back({{"kind", to_string(c.kind)},
                      {"name", c.name},
                      {"phase", to_string(c.phase)},
                      {"layers", c.layers},
                      {"count", c.count},
                      {"bytes", c.bytes},
                      {"total_bytes", c.total()},
                      {"group", c.group},
                      {"group_size", c.group_size}});
    roles.push_back({{"role", r.name}, {"ranks", r.ranks}, {"collectives", rows}});
  }
  return roles;
}

}  // namespace paratwin::reports
