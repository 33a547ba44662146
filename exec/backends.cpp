#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "common/input_error.hpp"
#include "exec/backend.hpp"
#include "exec/cpu_backend.hpp"

namespace paratwin::exec {

namespace {

#ifdef PARATWIN_HAVE_CUDA
// The plugin's file, and where that choice came from (for the message when it is missing).
std::pair<std::string, std::string> cuda_plugin_path() {
  if (const char* path = std::getenv(kCudaPluginEnv); path && *path)
    return {std::filesystem::absolute(path).string(), std::string("named by ") + kCudaPluginEnv};
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    throw BackendUnavailable(std::string("cannot find the cuda backend's plugin: /proc/self/exe: ") + error.message() +
                             " (set " + kCudaPluginEnv + " to its file)");
  return {(self.parent_path() / kCudaPluginFile).string(),
          std::string("built beside paratwin; ") + kCudaPluginEnv + " names another file"};
}

// Opened once and never closed: the backend's code and CUDA's exit handlers live in it.
CudaPluginFactory load_cuda_plugin() {
  static std::mutex mutex;
  static CudaPluginFactory factory = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (factory) return factory;
  const auto [path, source] = cuda_plugin_path();
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw BackendUnavailable("the cuda backend's plugin " + path + " does not exist (" + source + ")");
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    throw BackendUnavailable("cannot load the cuda backend's plugin " + path + ": " + (why ? why : "dlopen failed"));
  }
  factory = reinterpret_cast<CudaPluginFactory>(dlsym(library, kCudaPluginFactory));
  if (!factory)
    throw BackendUnavailable("the cuda backend's plugin " + path + " has no " + kCudaPluginFactory +
                             ": it was built from other sources than this paratwin");
  return factory;
}
#endif

}  // namespace

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
  if (name == "cuda") return std::unique_ptr<Backend>(load_cuda_plugin()());
#endif
  std::string known;
  for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("--backend", "backend \"" + name + "\" is not built into this paratwin (available: " + known + ")");
}

}  // namespace paratwin::exec
