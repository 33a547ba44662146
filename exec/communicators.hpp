#pragma once
// MPI sub-communicators for the groups of a Program: one per group of every axis mask its collectives
// use, built collectively (every rank calls MPI_Comm_split for every mask, in the same order) so that
// no rank waits for a split another never makes.
#include <mpi.h>

#include <map>

#include "workloads/program.hpp"

namespace paratwin::exec {

class Communicators {
 public:
  Communicators() = default;
  Communicators(const workloads::Program& program, int64_t rank);
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  // This rank's group along `mask`; its ranks are ordered by index in the group (Grid::index_in_group),
  // so a collective's root index is the root's rank in this communicator.
  MPI_Comm of(workloads::AxisMask mask) const;

 private:
  std::map<workloads::AxisMask, MPI_Comm> comms_;
};

}  // namespace paratwin::exec
