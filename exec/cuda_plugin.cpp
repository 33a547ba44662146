// The entry point of libparatwin_cuda.so, the plugin exec/backends.cpp opens for `--backend cuda`.
// Everything else in the plugin is hidden, so its copies of the workload code never stand in for
// the executable's.
#include <string_view>
#include <type_traits>

#include "exec/backend.hpp"
#include "exec/cuda_backend.hpp"

extern "C" __attribute__((visibility("default"))) paratwin::exec::Backend* paratwin_make_cuda_backend_v1() {
  return paratwin::exec::make_cuda_backend().release();
}

static_assert(std::string_view(paratwin::exec::kCudaPluginFactory) == "paratwin_make_cuda_backend_v1");
static_assert(std::is_same_v<decltype(&paratwin_make_cuda_backend_v1), paratwin::exec::CudaPluginFactory>);
