#pragma once
// Reading a user's JSON file: the text of a file, and JSON parsed from text, with errors that name
// the source. `Error` is the reader's own InputError subclass (WorkloadError, MachineError).
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace paratwin {

template <typename Error>
std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename Error>
nlohmann::json parse_json(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse errors, and numbers beyond double's range
    throw Error(source, std::string("is not valid JSON: ") + e.what());
  }
}

}  // namespace paratwin
