#pragma once
// The Program's op graph as a Boost.Graph DAG: validation (explicit dependencies point backwards,
// sends and receives match, collectives agree across the roles of a group, and the whole pipeline —
// dependencies, stream order and rendezvous of matched messages — is acyclic, i.e. cannot deadlock),
// topological order and critical path.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::workloads {

class ProgramError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void validate_program(const Program& p);

struct OpRef {
  int32_t role = 0;
  uint32_t op = 0;
};

// Longest path through the whole program (all roles, matched messages joined) when each op costs
// cost(role, op); message pairs cost the larger of their two ends.
struct CriticalPath {
  double length = 0;
  std::vector<OpRef> ops;
};
CriticalPath critical_path(const Program& p, const std::function<double(const Role&, const Op&)>& cost);

// A topological order of one role's ops honouring dependencies and stream order.
std::vector<uint32_t> topological_order(const Role& role);

}  // namespace paratwin::workloads
