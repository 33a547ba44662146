#pragma once
// The error every input reader throws: it names where (file and JSON path) and which rule broke, so
// the CLI can print it verbatim and exit with code 2.
#include <stdexcept>
#include <string>

namespace paratwin {

class InputError : public std::runtime_error {
 public:
  InputError(std::string path, std::string message)
      : std::runtime_error(join(one_line(path), one_line(message))),
        path_(one_line(path)),
        message_(one_line(message)) {}
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }

 private:
  // Keys and values quoted from a file may hold control characters (a newline, a terminal escape):
  // written as JSON escapes, so that the error stays the one line it is meant to be.
  static std::string one_line(const std::string& text) {
    static const char* const kHex = "0123456789abcdef";
    std::string out;
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x20 && u != 0x7f) {
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else {
        out += "\\u00";
        out += kHex[u >> 4];
        out += kHex[u & 15];
      }
    }
    return out;
  }

  // "a.b = 3 does not divide ..." reads better than "a.b: = 3 ..."; other messages follow a colon.
  static std::string join(const std::string& path, const std::string& message) {
    if (path.empty()) return message;
    return path + (message.rfind("= ", 0) == 0 ? " " : ": ") + message;
  }

  std::string path_;
  std::string message_;
};

}  // namespace paratwin
