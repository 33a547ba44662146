#include "exec/op_text.hpp"

namespace paratwin::exec {

namespace {

constexpr size_t kRanksListed = 8;

}  // namespace

std::string describe_op(const workloads::Program& program, const workloads::Op& op, uint32_t index) {
  std::string s = "op " + std::to_string(index) + " \"" + op.name + "\" (" + workloads::to_string(op.kind) + ", " +
                  workloads::to_string(op.phase);
  if (op.layer >= 0) s += ", layer " + std::to_string(op.layer);
  if (op.micro_batch >= 0) s += ", micro-batch " + std::to_string(op.micro_batch);
  if (workloads::is_collective(op.kind)) s += ", group " + program.grid.mask_name(op.group);
  return s + ")";
}

std::string op_counterparts(const workloads::Program& program, int64_t rank, const workloads::Op& op) {
  const auto& grid = program.grid;
  if (workloads::is_p2p(op.kind)) {
    const int pipe = grid.axis_index("pipe");
    if (pipe < 0) return "";
    return "rank " + std::to_string(grid.with_coord(rank, pipe, op.peer_stage)) + " (pipeline stage " +
           std::to_string(op.peer_stage) + ")";
  }
  if (!workloads::is_collective(op.kind)) return "";
  const auto members = grid.group(rank, op.group);
  std::string list;
  for (size_t i = 0; i < members.size() && i < kRanksListed; ++i)
    list += (list.empty() ? "" : ", ") + std::to_string(members[i]);
  if (members.size() > kRanksListed) list += ", ... (" + std::to_string(members.size()) + " ranks)";
  return "ranks " + list;
}

}  // namespace paratwin::exec
