#pragma once
// The two runs `paratwin compare` simulates: both checked before either starts, then both predicted at
// once, each in a child process of its own (one SimGrid engine per process). An input error on either
// side, found before or while it runs, is an InputError naming the side, not an internal error.
#include <string>
#include <utility>

#include "predict/predict.hpp"
#include "predict/prediction.hpp"
#include "topology/machine.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

struct CompareSide {
  std::string name;     // "A" or "B"
  std::string operand;  // as given: the machine, workload file or library that makes this side
  workloads::Workload workload;
  topology::Machine machine;
  PointOptions options;
  bool machine_is_operand = false;  // the machine is the operand (not --machine): errors name the operand
};

// check_point for both sides. Throws InputError "A (frontier): ..." for the first that fails.
void check_sides(const CompareSide& a, const CompareSide& b);

// Both predictions, A's first. Throws InputError naming the side for an input error found in a child,
// std::runtime_error naming it when a child fails otherwise.
std::pair<Prediction, Prediction> predict_sides(const CompareSide& a, const CompareSide& b);

// Under PCCL only the all-gathers and reduce-scatters are PCCL's (sim::library_running): a line that
// says whose the rest are ("B (pccl): ... run rccl's ..."); empty for the other libraries.
std::string library_note(const CompareSide& side, const Prediction& p);

}  // namespace paratwin::predict
