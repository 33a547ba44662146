#pragma once
// Shared by the GPU backend's files: error checks that name the call, the library's message, the rank
// and the op; dtype mappings; the one cuBLAS GEMM call (the backend and the numeric check use the same).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "workloads/program.hpp"

namespace paratwin::exec::gpu {

// Where a call was made, for error messages: the rank and either an op or a setup step.
struct Where {
  int64_t rank = -1;  // -1: outside a backend (the numeric check)
  const workloads::Op* op = nullptr;
  uint32_t index = 0;
  const char* step = "prepare";
};

// "op 17 'fc1.wgrad' (gemm on stream compute)"
std::string describe(const workloads::Op& op, uint32_t index);
// "rank 3, op 17 'fc1.wgrad' (gemm on stream compute)" or "rank 3, prepare"
std::string describe(const Where& where);

[[noreturn]] void fail(const char* call, const std::string& error, const Where& where);

inline void check(cudaError_t e, const char* call, const Where& where) {
  if (e != cudaSuccess) fail(call, cudaGetErrorString(e), where);
}
inline void check(cublasStatus_t s, const char* call, const Where& where) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(call, cublasGetStatusString(s), where);
}
void check(ncclResult_t r, const char* call, const Where& where);

// Element types.
cudaDataType_t cuda_type(workloads::Dtype d);
ncclDataType_t nccl_type(workloads::Dtype d);
size_t element_bytes(workloads::Dtype d);

// Device bytes of one GEMM's A, B and C, all batches, each rounded up to kAlign (an fp8 GEMM writes bf16).
constexpr size_t kAlign = 256;
constexpr size_t aligned(size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}
struct GemmBytes {
  size_t a = 0, b = 0, c = 0;
};
GemmBytes gemm_bytes(const workloads::GemmShape& g, workloads::Dtype d);

// cuBLASLt's workspace for the fp8 GEMMs of one handle: 32 MiB, what the cuBLAS documentation
// recommends on Hopper (cuBLAS 12 "cublasSetWorkspace": 32 MiB for sm90) and what Transformer Engine
// gives its GEMMs (transformer_engine/pytorch/module/base.py, get_cublas_workspace_size_bytes, v1.x).
constexpr size_t kGemmWorkspace = 32u << 20;
struct GemmWorkspace {
  void* data = nullptr;
  size_t bytes = 0;
};

// Enqueues C = op(A) op(B) (column-major, see cuda_gemm_check) on the handle's stream; A and B lie one
// after the other at `inputs` (B at gemm_bytes().a), C at `output`. fp32 accumulation for every dtype.
// fp8 (E4M3, unit scales, bf16 C) runs through cuBLASLt as C = A^T B whatever the shape's trans flags:
// Hopper's FP8 kernels take only that "TN" layout (cuBLAS 12 cublasLtMatmul, FP8 requirements), and
// Transformer Engine keeps a transposed fp8 copy of each operand to run every GEMM so; m and k must be
// multiples of 16 (the 16-byte alignment of its leading dimensions).
void enqueue_gemm(cublasHandle_t handle, const workloads::GemmShape& g, workloads::Dtype d, const void* inputs,
                  void* output, const Where& where, GemmWorkspace workspace = {});

}  // namespace paratwin::exec::gpu

// Keeps the call's text for the message (fail() keeps only the function name).
#define PARATWIN_GPU_CHECK(call, where) ::paratwin::exec::gpu::check((call), #call, (where))
