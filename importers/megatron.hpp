#pragma once
// Translating a Megatron-LM pretrain_gpt.py command line into a workload (`paratwin import megatron`).
// Every argument ends up somewhere the user can see: translated, listed as not modelled, listed as
// unknown, or refused as a performance setting the workload format cannot express.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workloads/error.hpp"
#include "workloads/workload.hpp"

namespace paratwin::importers {

struct MegatronImportOptions {
  std::string name;                  // the workload's name; empty: derived from the model and the world size
  int64_t world_size = 0;            // 0: torchrun's --nproc_per_node × --nnodes
  int64_t gpus_per_node = 0;         // stands for --nproc_per_node when the command has none
  int64_t devices_per_node = 0;      // placement.devices_per_node from a machine; 0: from the launcher
  std::string machine;               // the machine devices_per_node came from, for the description
  std::string framework;             // empty: megatron-core if the arguments use its flags, else megatron-lm-2022
  int64_t tokenizer_vocab_size = 0;  // unpadded vocabulary of a tokenizer paratwin cannot size
  bool allow_unknown = false;        // unknown arguments: listed warnings instead of an error
  bool approximate = false;          // inexpressible arguments: dropped and listed instead of an error
};

struct MegatronImport {
  std::string text;  // the workload JSON file
  workloads::Workload workload;
  std::vector<std::string> not_modelled;  // arguments as given ("--lr 6.0e-5")
  std::vector<std::string> unknown;       // with allow_unknown only
  std::vector<std::string> dropped;       // with approximate only: "--swiglu (why)"
  std::vector<std::string> assumptions;   // what paratwin assumed or approximated
};

// Arguments paratwin does not know, or that it cannot express; thrown together so that the user
// sees every one at once. Each list entry is one argument as given, the inexpressible ones with why.
class MegatronArgumentsError : public workloads::WorkloadError {
 public:
  MegatronArgumentsError(const std::string& message, std::vector<std::string> unknown,
                         std::vector<std::string> inexpressible, std::string error = "")
      : workloads::WorkloadError("", message),
        unknown_(std::move(unknown)),
        inexpressible_(std::move(inexpressible)),
        error_(std::move(error)) {}
  const std::vector<std::string>& unknown() const { return unknown_; }
  const std::vector<std::string>& inexpressible() const { return inexpressible_; }
  // A rule of Megatron-LM or of the workload format that the command breaks, found beside them ("").
  const std::string& error() const { return error_; }

 private:
  std::vector<std::string> unknown_, inexpressible_;
  std::string error_;
};

// `words`: the command line after paratwin's `--`, launcher words (torchrun, python -m ...) and the
// script path included. Throws workloads::WorkloadError naming the argument and its value for bad input and
// Megatron-LM constraint violations, MegatronArgumentsError for unknown or inexpressible arguments.
// An error in the command's values comes together with every unknown and inexpressible argument
// of the command, so that one message lists everything that stands in the way.
MegatronImport import_megatron(const std::vector<std::string>& words, const MegatronImportOptions& options);

// Megatron-LM's vocabulary padding: the next multiple of divisible_by × tensor size.
int64_t megatron_padded_vocab(int64_t vocab, int64_t divisible_by, int64_t tensor_size);

// The arguments the translator reads, each with what it becomes (for --help and the README).
const std::vector<std::pair<std::string, std::string>>& megatron_modelled_arguments();

}  // namespace paratwin::importers
