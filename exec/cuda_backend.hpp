#pragma once
// The GPU backend: CUDA streams and events, cuBLAS GEMMs, NCCL collectives and pipeline messages. This
// header includes no CUDA header, so that the executor can name the backend without the toolkit's
// include paths; it exists only in builds where CMake found CUDA and NCCL (PARATWIN_HAVE_CUDA).
#include <memory>
#include <string>
#include <vector>

#include "exec/backend.hpp"
#include "workloads/program.hpp"

namespace paratwin::exec {

// The "cuda" backend. prepare() is collective over MPI_COMM_WORLD (MPI initialised by the caller, with
// MPI_THREAD_MULTIPLE; the MPI rank is the Program rank). One thread calls every method.
std::unique_ptr<Backend> make_cuda_backend();

// How many CUDA devices this process sees; count is 0 and `why` says why (no driver, no device) when
// there is none. Never throws, so tests can skip with the reason.
struct CudaDevices {
  int count = 0;
  std::string why;
};
CudaDevices cuda_devices();

// Runs one GEMM of `shape` on the current device through the backend's cuBLAS call, for numeric
// checks. Column-major, as cuBLAS: C (m x n, ldc m) = op(A) op(B); A is m x k (k x m when trans_a), B is
// k x n (n x k when trans_b); batches follow each other (strides m*k, k*n, m*n). A and B are given in
// fp32 and rounded to `dtype` (bf16, fp8 E4M3 or fp32); C comes back in fp32 from `dtype` (from bf16 for
// fp8, which takes only trans_a and not trans_b, the layout its kernels run). Throws std::runtime_error
// on a CUDA or cuBLAS error and std::invalid_argument on bad sizes, fp16 or another fp8 layout.
std::vector<float> cuda_gemm_check(const workloads::GemmShape& shape, workloads::Dtype dtype,
                                   const std::vector<float>& a, const std::vector<float>& b);

}  // namespace paratwin::exec
