#pragma once
// How an error that ends a command is reported and which exit status it gives (commands.hpp's table),
// decided once for every command by the kind of the exception.
#include <exception>

namespace paratwin::cli {

// The status of an exception that ends a command: InputError 2 (bad input), JobFailed 4 (the job
// failed while running), text that is not UTF-8 on its way into a JSON output 2, anything else 1 (a bug).
int exit_status_of(const std::exception& e);

// Prints the error as every command does ("paratwin: error: ...") and returns exit_status_of(e).
int report_error(const std::exception& e);

}  // namespace paratwin::cli
