#pragma once
// What `paratwin import megatron` makes of each Megatron-LM argument it knows by name. The names are
// Megatron-LM's (megatron/training/arguments.py, megatron/arguments.py in releases before 2024, from
// 2021 on); the classification is paratwin's.
#include <string_view>

namespace paratwin::importers::megatron {

enum class Kind {
  modelled,      // read by the translator (import_megatron.cpp)
  not_modelled,  // no effect on paratwin's cost model: listed, then left out
  unsupported,   // changes the performance, but the workload format cannot express it
  conditional,   // neutral at `neutral` (not modelled), unsupported at any other value
};

struct Flag {
  std::string_view name;
  Kind kind;
  bool boolean;              // takes no value (store_true / store_false)
  std::string_view neutral;  // conditional: the value that changes nothing
  std::string_view why;      // unsupported / conditional: what paratwin cannot express
};

// The flag named `name` (with its two leading dashes), or nullptr.
const Flag* find_flag(std::string_view name);
// Families of arguments with no effect on the cost model (logging, checkpoint files, data, learning
// rate, ...), for arguments newer or older than the table.
bool not_modelled_by_prefix(std::string_view name);

}  // namespace paratwin::importers::megatron
