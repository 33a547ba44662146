#pragma once
// Reading a user's JSON file: the text of a file, and JSON parsed from text, with errors that name
// the source. `Error` is the reader's own InputError subclass (WorkloadError, MachineError).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace paratwin {

// What a JSON input may weigh: the largest file paratwin writes for itself to read back (a search's
// document of thousands of configurations) is tens of MiB.
constexpr std::uintmax_t kMaxInputBytes = 256ull << 20;

// Refuses what is not a regular file before opening it: a folder (which would read as empty), a FIFO
// (which blocks) or a device (/dev/zero would grow without end), and files above kMaxInputBytes, by
// their size or, where that says 0, as they are read.
template <typename Error>
std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status)) throw Error(path, "is a folder, not a file");
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw Error(path, "is not a regular file (a FIFO, socket or device): give a file");
  if (!ec && std::filesystem::exists(status)) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxInputBytes)
      throw Error(path, "is " + std::to_string(size >> 20) + " MiB, more than the " +
                            std::to_string(kMaxInputBytes >> 20) + " MiB an input file may have");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "cannot be opened");
  // The kernel's files list a size of 0 whatever they hold (/proc/self/pagemap: gigabytes): the limit
  // holds while reading too.
  std::string text;
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes)
      throw Error(path, "holds more than the " + std::to_string(kMaxInputBytes >> 20) + " MiB an input file may have");
  }
  return text;
}

// Parses strictly: a key that appears twice in one object is an error naming its path (JSON leaves
// it undefined, and taking the last one would silently drop the first).
template <typename Error>
nlohmann::json parse_json(const std::string& text, const std::string& source) {
  struct Open {
    bool object;
    std::string name;  // the key it is under, "[]" in an array, "" at the top
    std::set<std::string> keys;
  };
  std::vector<Open> open;
  std::string key;  // the innermost object's latest key
  const auto strict = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      open.push_back({event == E::object_start, open.empty() ? "" : open.back().object ? key : "[]", {}});
    } else if (event == E::object_end || event == E::array_end) {
      open.pop_back();
    } else if (event == E::key) {
      key = parsed.get<std::string>();
      if (!open.back().keys.insert(key).second) {
        std::string where;
        for (size_t i = 1; i < open.size(); ++i)
          where += open[i].name == "[]" || where.empty() ? open[i].name : "." + open[i].name;
        throw Error(source, (where.empty() ? "" : where + ": ") + "key \"" + key + "\" appears twice in one object");
      }
    }
    return true;
  };
  // The parser takes a NUL byte for the end of the text (as in a C string) and would accept a document
  // followed by one and anything after it; JSON text holds none, not even inside strings (RFC 8259 §7).
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t line_start = text.rfind('\n', nul == 0 ? 0 : nul - 1);
    const size_t line =
        1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    const size_t column = line_start == std::string::npos || nul == 0 ? nul + 1 : nul - line_start;
    throw Error(source, "is not valid JSON: a NUL byte at line " + std::to_string(line) + ", column " +
                            std::to_string(column) + " (byte " + std::to_string(nul) + ")");
  }
  try {
    return nlohmann::json::parse(text, strict);
  } catch (const nlohmann::json::exception& e) {  // parse errors, and numbers beyond double's range
    throw Error(source, std::string("is not valid JSON: ") + e.what());
  }
}

}  // namespace paratwin
