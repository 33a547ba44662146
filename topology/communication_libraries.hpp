#pragma once
// The communication libraries a machine profile, --library and the reference suites may name, registered
// in one list. Each has one file in sim/libraries/ holding its traits and its algorithm selector
// (sim/library.hpp); X(IDENTIFIER, "name as written"). Adding a library is that file and one line here
// (CONTRIBUTING.md, "Add a communication library").
#define PARATWIN_COMMUNICATION_LIBRARIES(X) \
  X(nccl, "nccl")                           \
  X(rccl, "rccl")                           \
  X(cray_mpich, "cray-mpich")               \
  X(mpi, "mpi")                             \
  X(pccl, "pccl")
