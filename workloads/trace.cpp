#include "workloads/trace.hpp"

#include <nlohmann/json.hpp>
#include <set>

namespace paratwin::workloads {

std::string chrome_trace(const Program& program, const std::vector<OpEvent>& events) {
  nlohmann::json out;
  auto& list = out["traceEvents"];
  list = nlohmann::json::array();
  std::set<int64_t> ranks;
  for (const auto& e : events) ranks.insert(e.rank);
  for (int64_t r : ranks) {
    list.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", r}, {"args", {{"name", "rank " + std::to_string(r)}}}});
    for (int s = 0; s < workloads::kStreams; ++s)
      list.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", r},
                      {"tid", s},
                      {"args", {{"name", workloads::to_string(static_cast<workloads::Stream>(s))}}}});
  }
  for (const auto& e : events) {
    const auto& role = program.roles[static_cast<size_t>(program.role_of(e.rank))];
    const auto& op = role.ops[e.op];
    nlohmann::json args = {
        {"op", e.op},        {"kind", workloads::to_string(op.kind)}, {"phase", workloads::to_string(op.phase)},
        {"layer", op.layer}, {"micro_batch", op.micro_batch},         {"chunk", op.chunk}};
    if (op.flops > 0) args["flops"] = op.flops;
    if (op.bytes > 0) args["bytes"] = op.bytes;
    if (workloads::is_collective(op.kind)) args["group"] = program.grid.mask_name(op.group);
    list.push_back({{"name", op.name},
                    {"cat", workloads::to_string(op.kind)},
                    {"ph", "X"},
                    {"ts", e.start * 1e6},
                    {"dur", (e.end - e.start) * 1e6},
                    {"pid", e.rank},
                    {"tid", static_cast<int>(op.stream)},
                    {"args", args}});
  }
  out["displayTimeUnit"] = "ms";
  return out.dump() + "\n";
}

}  // namespace paratwin::workloads
