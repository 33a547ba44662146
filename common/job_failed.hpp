#pragma once
// The error of a job that started and then failed (a child process, an MPI launch): not the input's
// fault, nor a bug of ours. The CLI prints it and exits with code 4.
#include <stdexcept>
#include <string>

namespace paratwin {

class JobFailed : public std::runtime_error {
 public:
  explicit JobFailed(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace paratwin
