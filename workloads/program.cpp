#include "workloads/program.hpp"

#include <cstring>

namespace paratwin::workloads {

const char* to_string(OpKind k) {
  static const char* names[kOpKinds] = {"gemm",           "elementwise", "optimizer",  "host_transfer", "all_reduce",
                                        "reduce_scatter", "all_gather",  "all_to_all", "broadcast",     "reduce",
                                        "send",           "recv",        "alloc",      "free"};
  return names[static_cast<int>(k)];
}

const char* to_string(Phase p) {
  static const char* names[kPhases] = {"fwd", "bwd", "recompute", "grad_sync", "optimizer"};
  return names[static_cast<int>(p)];
}

const char* to_string(Stream s) {
  static const char* names[kStreams] = {"compute",  "tensor",   "shard",    "expert", "data",   "send_fwd",
                                        "send_bwd", "recv_fwd", "recv_bwd", "host",   "context"};
  return names[static_cast<int>(s)];
}

std::optional<OpKind> parse_op_kind(const std::string& name) {
  for (int k = 0; k < kOpKinds; ++k)
    if (name == to_string(static_cast<OpKind>(k))) return static_cast<OpKind>(k);
  return std::nullopt;
}

bool is_collective(OpKind k) {
  return k >= OpKind::all_reduce && k <= OpKind::reduce;
}
bool is_p2p(OpKind k) {
  return k == OpKind::send || k == OpKind::recv;
}
bool is_attention_kernel(const Op& op) {
  return is_compute(op.kind) && std::strncmp(op.name, "attn.", 5) == 0;
}

bool is_compute(OpKind k) {
  return k <= OpKind::host_transfer;
}

int64_t Program::role_of(int64_t rank) const {
  return grid.coord(rank, grid.axis_index("pipe"));
}

Program single_collective_program(Grid grid, int64_t devices_per_node, OpKind kind, double bytes) {
  Program prog;
  prog.workload_name = "collective";
  prog.grid = std::move(grid);
  prog.devices_per_node = devices_per_node;
  Role role;
  role.name = "stage 0";
  role.ranks = prog.grid.size();
  Op op;
  op.kind = kind;
  op.stream = Stream::data;
  op.group = prog.grid.mask("data");
  op.bytes = bytes;
  op.name = "collective";
  role.ops.push_back(op);
  prog.roles.push_back(role);
  return prog;
}

}  // namespace paratwin::workloads
