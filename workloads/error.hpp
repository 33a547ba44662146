#pragma once
// One error type for everything a user can get wrong in a workload: it names where (file and JSON
// path) and which rule broke, so the CLI can print it verbatim and exit with code 2.
#include <stdexcept>
#include <string>

namespace paratwin::workloads {

class WorkloadError : public std::runtime_error {
 public:
  WorkloadError(std::string path, std::string message)
      : std::runtime_error(path.empty() ? message : path + ": " + message),
        path_(std::move(path)),
        message_(std::move(message)) {}
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }

 private:
  std::string path_;
  std::string message_;
};

}  // namespace paratwin::workloads
