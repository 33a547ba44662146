#include "cli/given_values.hpp"

#include <cmath>
#include <string>

namespace paratwin::cli {

namespace {

constexpr const char* kEmpty = "the value is empty: give one or leave the option out";

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

void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() == 0 || !option->nonpositional()) continue;  // flags; positionals: below
    // A transform runs before the checks added earlier (CLI11 2.1, Option::transform).
    option->transform(CLI::Validator([](std::string& value) { return value.empty() ? std::string(kEmpty) : ""; }, ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

void check_given_values(const CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0 || option->get_type_size() == 0) continue;  // not given, or a flag
    const auto& values = option->results();
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string& value = values[i];
      if (value.empty() && !option->nonpositional() && i > 0 && values[i - 1].rfind('-', 0) == 0)
        throw CLI::ValidationError(values[i - 1] + " (in " + option->get_name() + ")", kEmpty);
      if (value.empty()) throw CLI::ValidationError(option->get_name(), kEmpty);
      if (option->get_type_name().find("FLOAT") != std::string::npos && names_a_non_finite_number(value))
        throw CLI::ValidationError(option->get_name(), "= " + value + " is not a finite number");
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) check_given_values(*sub);
}

}  // namespace paratwin::cli
