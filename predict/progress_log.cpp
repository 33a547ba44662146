#include "predict/progress_log.hpp"

#include <chrono>
#include <cstdio>

namespace paratwin::predict {

std::function<void(const std::string&)> step_log() {
  const auto start = std::chrono::steady_clock::now();
  return [start](const std::string& what) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "paratwin simulate: [%.1f s] %s\n", s, what.c_str());
  };
}

void print_warning(const std::string& what) {
  std::fprintf(stderr, "paratwin: warning: %s\n", what.c_str());
}

}  // namespace paratwin::predict
