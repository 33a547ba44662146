#include "exec/communicators.hpp"

#include <set>
#include <stdexcept>
#include <string>

namespace paratwin::exec {

Communicators::Communicators(const workloads::Program& program, int64_t rank) {
  std::set<workloads::AxisMask> masks;  // ordered: the same sequence of splits on every rank
  for (const auto& role : program.roles)
    for (const auto& op : role.ops)
      if (workloads::is_collective(op.kind)) masks.insert(op.group);
  const auto& grid = program.grid;
  for (workloads::AxisMask mask : masks) {
    MPI_Comm comm = MPI_COMM_NULL;
    const int color = static_cast<int>(grid.group_member(rank, mask, 0));
    const int key = static_cast<int>(grid.index_in_group(rank, mask));
    if (MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm) != MPI_SUCCESS)
      throw std::runtime_error("MPI_Comm_split failed for group \"" + grid.mask_name(mask) + "\"");
    comms_[mask] = comm;
  }
}

Communicators::~Communicators() {
  for (auto& [mask, comm] : comms_) MPI_Comm_free(&comm);
}

MPI_Comm Communicators::of(workloads::AxisMask mask) const {
  const auto it = comms_.find(mask);
  if (it == comms_.end()) throw std::logic_error("no communicator for an axis mask the Program does not use");
  return it->second;
}

}  // namespace paratwin::exec
