#pragma once
// What an import's approximation (--approximate) leaves out of the model: the parameters and FLOPs per
// token it changes where paratwin can count them, and which kind of difference it is where it cannot.
#include <string>

#include "workloads/workload.hpp"

namespace paratwin::importers {

// For one dropped argument or config key as the importers list it ("--mtp-num-layers 1 (why)",
// "num_nextn_predict_layers 1 (why)"), of the imported model `m`: "leaves out 11.7 G parameters
// (+1.7 %) and 71 GFLOP per token of training (+2.9 %) ...", or what kind of difference dropping it
// makes.
std::string approximation_effect(const std::string& dropped, const workloads::ModelConfig& m);

// What `modules` multi-token prediction modules (DeepSeek-V3's MTP) add to `m`: parameters (the
// embedding and output layer shared) and training FLOPs per token (forward and backward).
struct AddedCost {
  double parameters = 0, flops_per_token = 0;
};
AddedCost multi_token_prediction_cost(const workloads::ModelConfig& m, int64_t modules);

}  // namespace paratwin::importers
