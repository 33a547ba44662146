#pragma once
// Checks every option value given on the command line against rules no single option states: an empty
// value ("--workload ''") is never meant, and a number option given nan or inf slips through CLI11's range
// checks (a comparison with nan is false).
#include <CLI/CLI.hpp>

namespace paratwin::cli {

// Throws CLI::ValidationError naming the option, for the subcommands that were parsed (nested too).
void check_given_values(const CLI::App& app);

}  // namespace paratwin::cli
