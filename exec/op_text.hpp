#pragma once
// How the executor names an op in its messages: a failure, and what a stalled rank waits on.
#include <cstdint>
#include <string>

#include "workloads/program.hpp"

namespace paratwin::exec {

// "op 3 "fc1" (gemm, fwd, layer 0, micro-batch 0)"; a collective adds its group.
std::string describe_op(const workloads::Program& program, const workloads::Op& op, uint32_t index);

// The ranks an op of `rank` needs: "ranks 0, 1" for a collective (the first few of a large group),
// "rank 1 (pipeline stage 1)" for a message; empty for an op the rank runs alone.
std::string op_counterparts(const workloads::Program& program, int64_t rank, const workloads::Op& op);

}  // namespace paratwin::exec
