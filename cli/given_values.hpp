#pragma once
// Checks every option value given on the command line against rules no single option states: an empty
// value ("--workload ''") is never meant, and a number option given nan or inf slips through CLI11's range
// checks (a comparison with nan is false).
#include <CLI/CLI.hpp>

namespace paratwin::cli {

// Throws CLI::ValidationError naming the option, for the subcommands that were parsed (nested too). An
// empty word among a positional's values (a Megatron-LM command) is named by the flag before it.
void check_given_values(const CLI::App& app);

// Makes an empty value of every option that takes one an error naming the option, before the option's
// own checks: a range check would say "Value  not in range 1 to 4096", a choice " not in {a,b}".
void refuse_empty_values(CLI::App& app);

}  // namespace paratwin::cli
