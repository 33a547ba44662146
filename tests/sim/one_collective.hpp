#pragma once
// A Program of a single collective over the "data" axis of `grid`, for collective-cost tests.
#include <string>

#include "workloads/program.hpp"

namespace paratwin::test {

inline workloads::Program one_collective(workloads::Grid grid, int64_t devices_per_node, workloads::OpKind kind,
                                         double bytes) {
  workloads::Program prog;
  prog.workload_name = "collective";
  prog.grid = std::move(grid);
  prog.devices_per_node = devices_per_node;
  workloads::Role role;
  role.name = "stage 0";
  role.ranks = prog.grid.size();
  workloads::Op op;
  op.kind = kind;
  op.stream = workloads::Stream::data;
  op.group = prog.grid.mask("data");
  op.bytes = bytes;
  op.name = "test";
  role.ops.push_back(op);
  prog.roles.push_back(role);
  return prog;
}

}  // namespace paratwin::test
