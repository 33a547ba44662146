#pragma once
// `exec --fail-at RANK:OP_NAME`: the fault a test injects to see a failing rank end the whole job. A
// fault that names no rank or no op of the workload would never fire and the job would end well, so
// the text is checked against the Program before anything runs.
#include <cstdint>
#include <string>

#include "workloads/program.hpp"

namespace paratwin::exec {

struct Fault {
  int64_t rank = -1;
  std::string op;
};

// "1:fc1" -> rank 1, op "fc1". Throws InputError naming --fail-at when the text is not RANK:OP_NAME,
// when the Program has no such rank, or when none of that rank's ops has that name (a few of its op
// names are listed).
Fault parse_fault(const std::string& text, const workloads::Program& program);

}  // namespace paratwin::exec
