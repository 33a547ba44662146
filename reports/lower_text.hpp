#pragma once
// `paratwin lower`'s text beyond the report (lower_report.hpp): a rank's grid coordinates and groups, every
// stage's pipeline schedule, a role's op list.
#include <cstdint>
#include <string>

#include "workloads/program.hpp"
#include "workloads/workload.hpp"

namespace paratwin::reports {

// "rank R: coordinates AXIS=I ...; node N, device D" and the ranks of each of its groups.
std::string rank_text(const workloads::Program& program, int64_t rank);

// The F/B order of every pipeline stage.
std::string schedules_text(const workloads::Workload& w);

// Every op of the role: kind, name, phase, layer, micro-batch, chunk, stream, shape, group or peer,
// bytes and dependencies.
std::string op_list_text(const workloads::Program& program, int64_t role);

}  // namespace paratwin::reports
