#include "cli/given_values.hpp"

#include <cmath>
#include <string>

namespace paratwin::cli {

namespace {

bool names_a_non_finite_number(const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    return used == text.size() && !std::isfinite(v);
  } catch (const std::exception&) {
    return false;  // not a number at all: CLI11 has said so already
  }
}

}  // namespace

void check_given_values(const CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0 || option->get_type_size() == 0) continue;  // not given, or a flag
    for (const std::string& value : option->results()) {
      if (value.empty())
        throw CLI::ValidationError(option->get_name(), "the value is empty: give one or leave the option out");
      if (option->get_type_name().find("FLOAT") != std::string::npos && names_a_non_finite_number(value))
        throw CLI::ValidationError(option->get_name(), "= " + value + " is not a finite number");
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) check_given_values(*sub);
}

}  // namespace paratwin::cli
