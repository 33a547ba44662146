// HPE Cray MPICH with GPU buffers: an MPI (sim/libraries/mpi.cpp: rings for all-reduce, reduce-scatter and
// all-gather, [singh2025dissertation] §6.1.4; binomial trees for broadcast and reduce; pairwise all-to-all;
// reductions on the CPU, §6.1.3) that sends every inter-node flow through the node's first NIC (§6.1.2).
#include "sim/library.hpp"

namespace paratwin::sim {

LibrarySpec cray_mpich_library() {
  LibrarySpec s = mpi_library();  // MPI's algorithms and selector
  s.name = "cray-mpich";
  s.one_nic_per_node = true;
  return s;
}

}  // namespace paratwin::sim
