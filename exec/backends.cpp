#include <stdexcept>

#include "exec/backend.hpp"
#include "exec/cpu_backend.hpp"
#ifdef PARATWIN_HAVE_CUDA
#include "exec/cuda_backend.hpp"
#endif

namespace paratwin::exec {

std::vector<std::string> backend_names() {
#ifdef PARATWIN_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "cpu") return make_cpu_backend();
#ifdef PARATWIN_HAVE_CUDA
  if (name == "cuda") return make_cuda_backend();
#endif
  std::string known;
  for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("backend \"" + name + "\" is not built into this paratwin (available: " + known + ")");
}

}  // namespace paratwin::exec
