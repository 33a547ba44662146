#pragma once
// A Hugging Face transformers `config.json` (the way most people hold a model's description) to the
// workload's `model` section (`paratwin import hf`). Decoder architectures whose layer paratwin models
// are translated key by key; features it cannot express are refused all at once, by name.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paratwin::importers {

struct HfImportOptions {
  int64_t seq_len = 0;       // the training sequence length; 0: the base workload's, else required
  bool approximate = false;  // inexpressible features left out and listed (with their parameters)
};

struct HfImport {
  nlohmann::ordered_json model;           // the workload's `model` section
  std::string architecture;               // e.g. LlamaForCausalLM
  std::vector<std::string> dropped;       // with approximate: what was left out, and what it changes
  std::vector<std::string> not_modelled;  // keys read but without effect on the cost model
};

// `config`: the parsed config.json, `file` its name for messages. Throws WorkloadError naming the key
// for bad values, and listing every inexpressible feature at once (unless approximate).
HfImport import_hf_config(const nlohmann::json& config, const std::string& file, const HfImportOptions& options);

// The architectures translated (for --help and errors).
const std::vector<std::string>& hf_architectures();

}  // namespace paratwin::importers
