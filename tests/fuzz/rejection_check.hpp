#pragma once
// What the fuzz targets of the machine and sweep-spec readers ask of every rejection: one line, a
// message, what() joining path and message as InputError does, and a JSON path after the source unless
// the text is not JSON or repeats a key (whose path the message gives). Anything else aborts, naming
// the target.
#include <cstdio>
#include <cstdlib>
#include <string>

namespace paratwin::fuzz {

[[noreturn]] inline void bug(const char* target, const char* stage, const std::string& what) {
  std::fprintf(stderr, "%s: %s: %s\n", target, stage, what.c_str());
  std::fflush(stderr);
  std::abort();
}

// `kind` names the error type in the messages ("MachineError").
template <class Error>
void check_rejection(const Error& e, const std::string& source, const char* target, const std::string& kind) {
  const std::string& path = e.path();
  const std::string what = e.what();
  const auto fail = [&](const std::string& stage) { bug(target, (kind + " " + stage).c_str(), what); };
  if (e.message().empty()) fail("with an empty message");
  if (what.find('\n') != std::string::npos) fail("of more than one line");
  const std::string joined = path + (e.message().rfind("= ", 0) == 0 ? " " : ": ") + e.message();
  if (what != joined) fail("whose what() does not join path and message");
  if (path == source) {
    if (e.message().rfind("is not valid JSON", 0) != 0 && e.message().find("appears twice") == std::string::npos)
      fail("names the source but no JSON path");
    return;
  }
  if (path.rfind(source + ": ", 0) != 0 || path.size() == source.size() + 2) fail("without source and path");
}

}  // namespace paratwin::fuzz
