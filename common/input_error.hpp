#pragma once
// The error every input reader throws: it names where (file and JSON path) and which rule broke, so
// the CLI can print it verbatim and exit with code 2.
#include <stdexcept>
#include <string>

namespace paratwin {

class InputError : public std::runtime_error {
 public:
  InputError(std::string path, std::string message)
      : std::runtime_error(join(path, message)), path_(std::move(path)), message_(std::move(message)) {}
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }

 private:
  // "a.b = 3 does not divide ..." reads better than "a.b: = 3 ..."; other messages follow a colon.
  static std::string join(const std::string& path, const std::string& message) {
    if (path.empty()) return message;
    return path + (message.rfind("= ", 0) == 0 ? " " : ": ") + message;
  }

  std::string path_;
  std::string message_;
};

}  // namespace paratwin
