#pragma once
// One collective alone: a data-parallel group of `gpus` devices running one call of `bytes` (the
// nccl-tests size), by SimGrid or in closed form. What a library comparison (PCCL over NCCL) predicts.
#include <cstdint>
#include <string>

#include "predict/prediction.hpp"
#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::predict {

// Seconds of the call with `library`. SimGrid runs in this process (one engine per process: call it in a
// child). Throws InputError (--machine) when the machine has fewer than `gpus` devices.
double collective_seconds(const topology::Machine& machine, workloads::OpKind kind, double bytes, int64_t gpus,
                          const std::string& library, Model model);

}  // namespace paratwin::predict
