#pragma once
// Subcommands of the paratwin CLI. Each registers its options and returns the action to run.
#include <CLI/CLI.hpp>
#include <functional>

#include "common/exit_codes.hpp"

namespace paratwin::cli {

// Exit codes, one table for every command (common/exit_codes.hpp).
using paratwin::kExitBadInput;
using paratwin::kExitInternal;
using paratwin::kExitJobFailed;
using paratwin::kExitSomeFailed;
// The table as `paratwin --help` and every subcommand's help print it (the README holds the same rows;
// a test compares them).
constexpr const char* kExitStatusHelp =
    "Exit status:\n"
    "  0  success\n"
    "  1  internal error: a bug in paratwin (please report it with the command line)\n"
    "  2  bad input: an option, input file or output path, named in the message; no output is written\n"
    "  3  finished, but some results failed: sweep points, validation points, baseline or --verify checks\n"
    "  4  the job failed while running: a rank failed, stopped or timed out, a child job failed, or the backend "
    "cannot run on this host";

using Action = std::function<int()>;
Action add_lower_command(CLI::App& app);
Action add_machine_command(CLI::App& app);
Action add_simulate_command(CLI::App& app);
Action add_sweep_command(CLI::App& app);
Action add_search_command(CLI::App& app);
Action add_exec_command(CLI::App& app);
Action add_calibrate_command(CLI::App& app);
Action add_validate_command(CLI::App& app);
Action add_baseline_command(CLI::App& app);
Action add_compare_command(CLI::App& app);
Action add_import_command(CLI::App& app);

}  // namespace paratwin::cli
