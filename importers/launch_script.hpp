#pragma once
// A training launch script (a bash script that ends in `torchrun ... pretrain_gpt.py ...`) run for
// the command line it builds: bash runs it in an empty scratch folder with the launchers on the PATH
// (torchrun, python, srun, ...) replaced by a recorder that writes its arguments down and starts
// nothing. The script's own logic (arrays, conditionals, defaults of its arguments and environment)
// then yields exactly the command it would launch, without a parser of bash that would never be whole.
#include <string>
#include <vector>

namespace paratwin::importers {

struct RecordedLaunch {
  std::vector<std::vector<std::string>> commands;  // each launcher call: its name, then its arguments
  int exit_status = 0;                             // the script's
  std::string output;                              // the last lines the script printed
};

// Runs `script` with bash and `arguments`, for at most `timeout_s` seconds. Throws InputError naming
// `flag` when the script cannot be read or runs too long.
RecordedLaunch record_launch(const std::string& flag, const std::string& script,
                             const std::vector<std::string>& arguments, double timeout_s = 60);

// The training command among the recorded calls: the first with a Python script (*.py) among its
// arguments, from the launcher proper (torchrun or python) on; wrappers before it (uv run, nsys
// profile ..., srun ...) dropped. Throws InputError naming `flag` when there is none.
std::vector<std::string> training_command(const std::string& flag, const std::string& script,
                                          const RecordedLaunch& launch);

}  // namespace paratwin::importers
