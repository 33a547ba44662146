#pragma once
// The CPU backend: GEMMs with the system BLAS (one thread per rank, fp32 buffers of the Program's
// shapes), element-wise and optimizer work as memory sweeps of the op's bytes, and communication as
// non-blocking MPI on the groups' sub-communicators, started and progressed by a thread of its own so
// that it truly overlaps the compute thread's work.
#include <memory>

#include "exec/backend.hpp"

namespace paratwin::exec {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace paratwin::exec
