#include "reports/lower_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/schema_version.hpp"

namespace paratwin::reports {

// A report is of the workload model's programs, roles and ops: their names read unqualified here.
using namespace workloads;

namespace {

std::string human(double v, const char* unit, double base = 1000.0) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  // At 1000 or more the next prefix (0.979 GiB, not a three-digit "1e+03 MiB").
  while (v >= std::min(base, 1000.0) && i < 6) {
    v /= base;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[i], unit);
  return buf;
}

}  // namespace

std::string bytes_text(double b) {
  return human(b, b >= 1024 ? "iB" : "B", 1024.0);
}

ProgramSummary summarize(const Program& p) {
  ProgramSummary s;
  s.workload = p.workload_name;
  s.stack = stack_label(p.framework);
  s.description = p.workload_description;
  s.ranks = p.grid.size();
  s.axes = p.grid.axes();
  s.micro_batches = p.micro_batches;
  s.tokens_per_iteration = p.tokens_per_iteration;
  s.parameters = p.parameters;
  s.model_flops = p.model_flops;
  s.hardware_flops = p.hardware_flops;
  for (const Role& role : p.roles) {
    RoleSummary r;
    r.name = role.name;
    r.stage = role.stage;
    r.ranks = role.ranks;
    r.params = role.params;
    r.memory = role.memory;
    std::map<std::pair<int, AxisMask>, CollectiveStat> coll;
    for (const Op& op : role.ops) {
      ++r.op_counts[static_cast<int>(op.kind)];
      if (is_compute(op.kind)) {
        r.flops_by_phase[static_cast<int>(op.phase)] += op.flops;
        r.compute_flops += op.flops;
        if (op.kind == OpKind::gemm) r.gemm_flops += op.flops;
      } else if (is_collective(op.kind)) {
        auto& c = coll[{static_cast<int>(op.kind), op.group}];
        c.kind = op.kind;
        c.group = p.grid.mask_name(op.group);
        c.group_size = p.grid.group_size(op.group);
        ++c.count;
        c.bytes += op.bytes;
      } else if (op.kind == OpKind::send) {
        ++r.messages;
        r.message_bytes += op.bytes;
      }
    }
    for (auto& [key, c] : coll) r.collectives.push_back(c);
    s.executed_gemm_flops += r.gemm_flops * static_cast<double>(r.ranks);
    s.roles.push_back(std::move(r));
  }
  return s;
}

nlohmann::json to_json(const ProgramSummary& s, std::optional<double> device_memory) {
  nlohmann::json j;
  j["schema_version"] = kSchemaVersion;  // schemas/lower.schema.json
  j["workload"] = s.workload;
  if (!s.description.empty()) j["description"] = s.description;
  j["ranks"] = s.ranks;
  for (const auto& a : s.axes) j["grid"].push_back({{"axis", a.name}, {"size", a.size}});
  j["micro_batches"] = s.micro_batches;
  j["tokens_per_iteration"] = s.tokens_per_iteration;
  j["parameters"] = s.parameters;
  j["model_flops"] = s.model_flops;
  j["hardware_flops"] = s.hardware_flops;
  j["executed_gemm_flops"] = s.executed_gemm_flops;
  if (device_memory) j["device_memory_bytes"] = *device_memory;
  for (const auto& r : s.roles) {
    nlohmann::json role;
    role["name"] = r.name;
    role["stage"] = r.stage;
    role["ranks"] = r.ranks;
    for (int k = 0; k < kOpKinds; ++k)
      if (r.op_counts[k]) role["op_counts"][to_string(static_cast<OpKind>(k))] = r.op_counts[k];
    for (int ph = 0; ph < kPhases; ++ph)
      if (r.flops_by_phase[ph] > 0) role["flops"][to_string(static_cast<Phase>(ph))] = r.flops_by_phase[ph];
    role["gemm_flops"] = r.gemm_flops;
    for (const auto& c : r.collectives)
      role["collectives"].push_back({{"kind", to_string(c.kind)},
                                     {"group", c.group},
                                     {"group_size", c.group_size},
                                     {"count", c.count},
                                     {"bytes", c.bytes}});
    role["messages"] = {{"count", r.messages}, {"bytes", r.message_bytes}};
    role["parameters"] = r.params;
    const auto& m = r.memory;
    role["memory"] = {{"weights_bytes", m.weights},
                      {"gradients_bytes", m.gradients},
                      {"optimizer_bytes", m.optimizer},
                      {"host_optimizer_bytes", m.host_optimizer},
                      {"gathered_weights_bytes", m.gathered_weights},
                      {"activations_bytes", m.activations},
                      {"comm_stash_bytes", m.comm_stash},
                      {"loss_transient_bytes", m.loss_transient},
                      {"total_bytes", m.total()}};
    if (device_memory) role["memory"]["fits"] = m.total() <= *device_memory;
    j["roles"].push_back(role);
  }
  return j;
}

std::string format_text(const ProgramSummary& s, std::optional<double> device_memory, int64_t only_role) {
  std::ostringstream o;
  o << "workload " << s.workload << ": " << s.ranks << " ranks, grid";
  for (const auto& a : s.axes) o << ' ' << a.name << '=' << a.size;
  o << ", " << s.stack;
  o << "\n  " << human(s.parameters, "") << " parameters, " << s.micro_batches << " micro-batches, "
    << s.tokens_per_iteration << " tokens per iteration\n";
  o << "  model FLOPs per iteration " << human(s.model_flops, "FLOP") << " (no recomputation), hardware FLOPs "
    << human(s.hardware_flops, "FLOP") << " (with it), executed GEMM FLOPs (all ranks) "
    << human(s.executed_gemm_flops, "FLOP") << "\n";
  for (const auto& r : s.roles) {
    if (only_role >= 0 && r.stage != only_role) continue;
    o << "\n" << r.name << " (" << r.ranks << " ranks share this op list)\n";
    o << "  ops:";
    for (int k = 0; k < kOpKinds; ++k)
      if (r.op_counts[k]) o << ' ' << to_string(static_cast<OpKind>(k)) << '=' << r.op_counts[k];
    o << "\n  FLOPs per rank:";
    for (int ph = 0; ph < kPhases; ++ph)
      if (r.flops_by_phase[ph] > 0)
        o << ' ' << to_string(static_cast<Phase>(ph)) << ' ' << human(r.flops_by_phase[ph], "FLOP");
    o << " (GEMM " << human(r.gemm_flops, "FLOP") << ")\n";
    if (!r.collectives.empty()) {
      o << "  collectives per rank:\n";
      char line[160];
      std::snprintf(line, sizeof line, "    %-15s %-14s %6s %8s %12s\n", "kind", "group", "size", "count", "bytes");
      o << line;
      for (const auto& c : r.collectives) {
        std::snprintf(line, sizeof line, "    %-15s %-14s %6lld %8lld %12s\n", to_string(c.kind), c.group.c_str(),
                      static_cast<long long>(c.group_size), static_cast<long long>(c.count),
                      bytes_text(c.bytes).c_str());
        o << line;
      }
    }
    if (r.messages) o << "  pipeline sends: " << r.messages << ", " << bytes_text(r.message_bytes) << "\n";
    const auto& m = r.memory;
    o << "  memory per rank: weights " << bytes_text(m.weights) << ", gradients " << bytes_text(m.gradients)
      << ", optimizer " << bytes_text(m.optimizer);
    if (m.host_optimizer > 0) o << " (+" << bytes_text(m.host_optimizer) << " in host memory)";
    if (m.gathered_weights > 0) o << ", gathered weights " << bytes_text(m.gathered_weights);
    o << ", activations " << bytes_text(m.activations) << " = " << bytes_text(m.total()) << "\n";
    if (device_memory) {
      if (m.total() <= *device_memory)
        o << "  fits in " << bytes_text(*device_memory) << " of device memory\n";
      else
        o << "  OUT OF MEMORY: needs " << bytes_text(m.total()) << ", the device has " << bytes_text(*device_memory)
          << "\n";
    }
  }
  return o.str();
}

}  // namespace paratwin::reports
