#pragma once
// A Program of a single collective over the "data" axis of `grid`, for collective-cost tests.
#include "workloads/program.hpp"

namespace paratwin::test {

inline workloads::Program one_collective(workloads::Grid grid, int64_t devices_per_node, workloads::OpKind kind,
                                         double bytes) {
  return workloads::single_collective_program(std::move(grid), devices_per_node, kind, bytes);
}

}  // namespace paratwin::test
