#pragma once
// Subcommands of the paratwin CLI. Each registers its options and returns the action to run.
#include <CLI/CLI.hpp>
#include <functional>

namespace paratwin::cli {

// Exit codes: 0 success, 1 internal failure, 2 bad input (a message names file, path and rule), 3
// finished but some results or checks failed, 4 the job failed while running (a rank failed, was
// killed or stalled, an injected fault, a backend that cannot run on this host).
constexpr int kExitBadInput = 2;
constexpr int kExitChecksFailed = 3;
constexpr int kExitJobFailed = 4;

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

}  // namespace paratwin::cli
