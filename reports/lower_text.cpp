#include "reports/lower_text.hpp"

#include <sstream>

#include "workloads/schedule.hpp"

namespace paratwin::reports {

// A report is of the workload model's programs, roles and ops: their names read unqualified here.
using namespace workloads;

std::string rank_text(const Program& program, int64_t rank) {
  std::ostringstream out;
  const auto placement = program.placement();
  const auto slot = placement.slot_of(rank);
  out << "\nrank " << rank << ": coordinates";
  const auto coords = program.grid.coords(rank);
  for (size_t i = 0; i < coords.size(); ++i) out << ' ' << program.grid.axes()[i].name << '=' << coords[i];
  if (program.devices_per_node > 0) out << "; node " << slot.node << ", device " << slot.local;
  out << "\n";
  for (size_t i = 0; i < program.grid.axes().size(); ++i) {
    const auto mask = AxisMask{1} << i;
    if (program.grid.group_size(mask) <= 1) continue;
    out << "  " << program.grid.axes()[i].name << " group:";
    for (int64_t r : program.grid.group(rank, mask)) out << ' ' << r;
    out << "\n";
  }
  return out.str();
}

std::string schedules_text(const Workload& w) {
  std::ostringstream out;
  const auto& pp = w.parallel.pipeline;
  const ScheduleSpec spec{pp.schedule, pp.stages, w.micro_batches(), pp.chunks, pp.pipeline_limit};
  const auto all = all_stage_schedules(spec);
  out << "\npipeline schedule (" << to_string(pp.schedule) << "):\n";
  for (size_t s = 0; s < all.size(); ++s) out << "  stage " << s << ": " << describe(all[s], pp.chunks) << "\n";
  return out.str();
}

std::string op_list_text(const Program& program, int64_t role) {
  std::ostringstream out;
  const auto& r = program.roles[static_cast<size_t>(role)];
  out << "\nop list of " << r.name << ":\n";
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const auto& op = r.ops[i];
    out << "  " << i << ' ' << to_string(op.kind) << ' ' << op.name << " [" << to_string(op.phase) << " layer "
        << op.layer << " mb " << op.micro_batch << " chunk " << op.chunk << " stream " << to_string(op.stream) << "]";
    if (op.kind == OpKind::gemm)
      out << " m=" << op.gemm.m << " n=" << op.gemm.n << " k=" << op.gemm.k << " batch=" << op.gemm.batch;
    if (is_collective(op.kind)) out << " group=" << program.grid.mask_name(op.group);
    if (is_p2p(op.kind)) out << " peer=" << op.peer_stage << " tag=" << op.tag;
    out << " bytes=" << op.bytes;
    if (op.dep_count) {
      out << " deps=";
      for (uint32_t k = 0; k < op.dep_count; ++k) out << (k ? "," : "") << r.deps[op.dep_begin + k];
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace paratwin::reports
