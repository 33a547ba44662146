#include "exec/cuda_support.hpp"

#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "exec/cuda_backend.hpp"

namespace paratwin::exec::gpu {

using workloads::Dtype;
using workloads::GemmShape;

std::string describe(const workloads::Op& op, uint32_t index) {
  return "op " + std::to_string(index) + " '" + op.name + "' (" + workloads::to_string(op.kind) + " on stream " +
         workloads::to_string(op.stream) + ")";
}

std::string describe(const Where& where) {
  std::string out = where.rank >= 0 ? "rank " + std::to_string(where.rank) + ", " : std::string();
  return out + (where.op ? describe(*where.op, where.index) : std::string(where.step));
}

void fail(const char* call, const std::string& error, const Where& where) {
  // The macro passes the whole expression; its function name is enough to find the call.
  const std::string_view text(call);
  const std::string_view function = text.substr(0, text.find('('));
  throw std::runtime_error(describe(where) + ": " + std::string(function) + " failed: " + error);
}

void check(ncclResult_t r, const char* call, const Where& where) {
  if (r == ncclSuccess) return;
  std::string error = ncclGetErrorString(r);
  // The last error's text says which peer or transport failed; it is global to the process.
  if (const char* last = ncclGetLastError(nullptr); last && *last) error += " (" + std::string(last) + ")";
  fail(call, error, where);
}

cudaDataType_t cuda_type(Dtype d) {
  switch (d) {
    case Dtype::bf16:
      return CUDA_R_16BF;
    case Dtype::fp16:
      return CUDA_R_16F;
    case Dtype::fp32:
      return CUDA_R_32F;
    case Dtype::fp8:
      return CUDA_R_8F_E4M3;
  }
  return CUDA_R_32F;
}

ncclDataType_t nccl_type(Dtype d) {
  switch (d) {
    case Dtype::bf16:
      return ncclBfloat16;
    case Dtype::fp16:
      return ncclFloat16;
    case Dtype::fp32:
      return ncclFloat32;
    case Dtype::fp8:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
      return ncclFloat8e4m3;
#else
      return ncclUint8;  // moves the bytes; a reduction of fp8 needs NCCL 2.24
#endif
  }
  return ncclFloat32;
}

size_t element_bytes(Dtype d) {
  return static_cast<size_t>(workloads::bytes_of(d));
}

namespace {

int as_int(int64_t v, const char* what, const Where& where) {
  if (v < 0 || v > INT_MAX)
    throw std::runtime_error(describe(where) + ": GEMM " + what + " = " + std::to_string(v) +
                             " does not fit cuBLAS's 32-bit dimensions");
  return static_cast<int>(v);
}

}  // namespace

GemmBytes gemm_bytes(const GemmShape& g, Dtype d) {
  const auto count = [&](int64_t rows, int64_t cols, Dtype t) {
    return aligned(static_cast<size_t>(g.batch) * static_cast<size_t>(rows) * static_cast<size_t>(cols) *
                   element_bytes(t));
  };
  return {count(g.m, g.k, d), count(g.k, g.n, d), count(g.m, g.n, d == Dtype::fp8 ? Dtype::bf16 : d)};
}

namespace {

// One fp8 GEMM shape's cuBLASLt descriptors and the heuristic's first algorithm, made once per shape and
// workspace size and kept for the process's life (a few hundred bytes each): the heuristic costs tens of
// microseconds of host time, which would otherwise delay every timed launch.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

const LtPlan& lt_plan(cublasLtHandle_t lt, int m, int n, int k, int batch, size_t workspace, const Where& where) {
  static std::map<std::array<int64_t, 5>, LtPlan> plans;
  const std::array<int64_t, 5> key{m, n, k, batch, static_cast<int64_t>(workspace)};
  if (const auto it = plans.find(key); it != plans.end()) return it->second;
  LtPlan p;
  PARATWIN_GPU_CHECK(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), where);
  const cublasOperation_t transpose = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  PARATWIN_GPU_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose),
                     where);
  PARATWIN_GPU_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain), where);
  // A stored k x m (its transpose is used), B k x n, C m x n, each batch after the previous one.
  const auto layout = [&](cublasLtMatrixLayout_t& l, cudaDataType_t type, int rows, int cols) {
    PARATWIN_GPU_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols),
                                                  static_cast<int64_t>(rows)),
                       where);
    if (batch == 1) return;
    const int32_t count = batch;
    const int64_t stride = static_cast<int64_t>(rows) * cols;
    PARATWIN_GPU_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
                       where);
    PARATWIN_GPU_CHECK(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
        where);
  };
  layout(p.a, CUDA_R_8F_E4M3, k, m);
  layout(p.b, CUDA_R_8F_E4M3, k, n);
  layout(p.c, CUDA_R_16BF, m, n);
  cublasLtMatmulPreference_t preference = nullptr;
  PARATWIN_GPU_CHECK(cublasLtMatmulPreferenceCreate(&preference), where);
  const uint64_t limit = workspace;
  PARATWIN_GPU_CHECK(
      cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit),
      where);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(lt, p.desc, p.a, p.b, p.c, p.c, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  PARATWIN_GPU_CHECK(status, where);
  if (found == 0)
    throw std::runtime_error(describe(where) + ": cuBLASLt has no fp8 kernel for m=" + std::to_string(m) +
                             " n=" + std::to_string(n) + " k=" + std::to_string(k) + " batch=" + std::to_string(batch) +
                             " on this device (FP8 needs sm89 or later)");
  p.algo = result.algo;
  return plans.emplace(key, p).first->second;
}

void enqueue_fp8_gemm(cublasHandle_t handle, int m, int n, int k, int batch, const char* a, const char* b, void* c,
                      GemmWorkspace workspace, const Where& where) {
  if (m % 16 != 0 || k % 16 != 0)
    throw std::runtime_error(describe(where) + ": an fp8 GEMM needs m and k multiples of 16 (m=" + std::to_string(m) +
                             ", k=" + std::to_string(k) +
                             "): cuBLASLt's FP8 kernels need 16-byte aligned leading dimensions");
  // A cuBLAS handle is also a cuBLASLt handle (cuBLAS 12 documentation, cublasLtHandle_t; PyTorch's
  // aten/src/ATen/cuda/CUDABlas.cpp casts its handle so).
  const auto lt = reinterpret_cast<cublasLtHandle_t>(handle);
  const LtPlan& p = lt_plan(lt, m, n, k, batch, workspace.bytes, where);
  cudaStream_t stream = nullptr;
  PARATWIN_GPU_CHECK(cublasGetStream(handle, &stream), where);
  const float alpha = 1.0f, beta = 0.0f;
  PARATWIN_GPU_CHECK(cublasLtMatmul(lt, p.desc, &alpha, a, p.a, b, p.b, &beta, c, p.c, c, p.c, &p.algo, workspace.data,
                                    workspace.bytes, stream),
                     where);
}

}  // namespace

void enqueue_gemm(cublasHandle_t handle, const GemmShape& g, Dtype d, const void* inputs, void* output,
                  const Where& where, GemmWorkspace workspace) {
  const int m = as_int(g.m, "m", where), n = as_int(g.n, "n", where), k = as_int(g.k, "k", where);
  const int batch = as_int(g.batch, "batch", where);
  if (m == 0 || n == 0 || k == 0 || batch == 0) return;
  const char* a = static_cast<const char*>(inputs);
  const char* b = a + gemm_bytes(g, d).a;
  void* c = output;
  if (d == Dtype::fp8) return enqueue_fp8_gemm(handle, m, n, k, batch, a, b, c, workspace, where);
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = g.trans_a ? k : m, ldb = g.trans_b ? n : k, ldc = m;
  const cudaDataType_t t = cuda_type(d);
  // fp32 accumulation as mixed-precision training does; alpha and beta are then floats.
  const float alpha = 1.0f, beta = 0.0f;
  if (batch == 1) {
    PARATWIN_GPU_CHECK(cublasGemmEx(handle, op_a, op_b, m, n, k, &alpha, a, t, lda, b, t, ldb, &beta, c, t, ldc,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       where);
    return;
  }
  const long long stride_a = static_cast<long long>(m) * k, stride_b = static_cast<long long>(k) * n,
                  stride_c = static_cast<long long>(m) * n;
  PARATWIN_GPU_CHECK(
      cublasGemmStridedBatchedEx(handle, op_a, op_b, m, n, k, &alpha, a, t, lda, stride_a, b, t, ldb, stride_b, &beta,
                                 c, t, ldc, stride_c, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      where);
}

}  // namespace paratwin::exec::gpu

namespace paratwin::exec {

using workloads::Dtype;

CudaDevices cuda_devices() {
  CudaDevices out;
  const cudaError_t e = cudaGetDeviceCount(&out.count);
  if (e != cudaSuccess) {
    out.count = 0;
    out.why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
  } else if (out.count == 0) {
    out.why = "cudaGetDeviceCount reports 0 devices";
  }
  return out;
}

namespace {

// bf16 is the upper half of an fp32; round to nearest even as the hardware does.
uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x007fffffu)) return 0x7fc0;  // NaN stays a NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// E4M3 (bias 7, no infinities, 448 the largest), round to nearest even, saturating as Transformer
// Engine's casts do; NaN and infinities are not given to it here.
uint8_t to_e4m3(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const double x = std::fabs(static_cast<double>(f));
  if (x >= 448.0) return sign | 0x7e;
  if (x == 0) return sign;
  int e = 0;
  (void)std::frexp(x, &e);                            // x = f * 2^e, f in [0.5, 1): the exponent of x is e - 1
  int exponent = std::max(e - 1, -6);                 // below 2^-6 the subnormals' step 2^-9
  const double step = std::ldexp(1.0, exponent - 3);  // three mantissa bits
  long q = std::lrint(x / step);                      // round to nearest even (the default mode)
  if (exponent == -6 && q < 8) return sign | static_cast<uint8_t>(q);  // subnormal (or zero)
  if (q == 16) {
    q = 8;
    ++exponent;
  }
  if (exponent > 8) return sign | 0x7e;
  return sign | static_cast<uint8_t>(((exponent + 7) << 3) | (q - 8));
}

float from_bf16(uint16_t h) {
  const uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

// Owns one device allocation and a stream and handle, so that a failed check frees them.
struct Scratch {
  void* memory = nullptr;
  void* workspace = nullptr;
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (handle) cublasDestroy(handle);
    if (stream) cudaStreamDestroy(stream);
    if (memory) cudaFree(memory);
    if (workspace) cudaFree(workspace);
  }
};

}  // namespace

std::vector<float> cuda_gemm_check(const workloads::GemmShape& shape, Dtype dtype, const std::vector<float>& a,
                                   const std::vector<float>& b) {
  if (dtype == Dtype::fp16) throw std::invalid_argument("cuda_gemm_check: fp16 is not supported (bf16, fp8, fp32)");
  if (dtype == Dtype::fp8 && (!shape.trans_a || shape.trans_b))
    throw std::invalid_argument("cuda_gemm_check: fp8 runs A transposed and B not (trans_a true, trans_b false)");
  const auto elements = [&](int64_t rows, int64_t cols) { return static_cast<size_t>(shape.batch * rows * cols); };
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0 || a.size() != elements(shape.m, shape.k) ||
      b.size() != elements(shape.k, shape.n))
    throw std::invalid_argument("cuda_gemm_check: A must hold batch*m*k and B batch*k*n values, all sizes positive");

  const gpu::Where where{-1, nullptr, 0, "cuda_gemm_check"};
  const size_t esize = gpu::element_bytes(dtype);
  // Host images of A, B and C, in the device layout enqueue_gemm expects.
  const gpu::GemmBytes bytes = gpu::gemm_bytes(shape, dtype);
  std::vector<char> host(bytes.a + bytes.b + bytes.c, 0);
  const auto store = [&](const std::vector<float>& values, size_t offset) {
    for (size_t i = 0; i < values.size(); ++i) {
      char* at = host.data() + offset + i * esize;
      if (dtype == Dtype::bf16) {
        const uint16_t h = to_bf16(values[i]);
        std::memcpy(at, &h, sizeof h);
      } else if (dtype == Dtype::fp8) {
        const uint8_t q = to_e4m3(values[i]);
        std::memcpy(at, &q, sizeof q);
      } else {
        std::memcpy(at, &values[i], sizeof(float));
      }
    }
  };
  const size_t b_offset = bytes.a;
  const size_t c_offset = bytes.a + bytes.b;
  store(a, 0);
  store(b, b_offset);

  Scratch s;
  PARATWIN_GPU_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), where);
  PARATWIN_GPU_CHECK(cublasCreate(&s.handle), where);
  PARATWIN_GPU_CHECK(cublasSetStream(s.handle, s.stream), where);
  PARATWIN_GPU_CHECK(cudaMalloc(&s.memory, host.size()), where);
  PARATWIN_GPU_CHECK(cudaMemcpyAsync(s.memory, host.data(), host.size(), cudaMemcpyHostToDevice, s.stream), where);
  PARATWIN_GPU_CHECK(cudaMalloc(&s.workspace, gpu::kGemmWorkspace), where);
  gpu::enqueue_gemm(s.handle, shape, dtype, s.memory, static_cast<char*>(s.memory) + c_offset, where,
                    {s.workspace, gpu::kGemmWorkspace});
  PARATWIN_GPU_CHECK(cudaMemcpyAsync(host.data(), s.memory, host.size(), cudaMemcpyDeviceToHost, s.stream), where);
  PARATWIN_GPU_CHECK(cudaStreamSynchronize(s.stream), where);

  std::vector<float> c(elements(shape.m, shape.n));
  const size_t c_size = dtype == Dtype::fp8 ? 2 : esize;  // fp8 GEMMs write bf16
  for (size_t i = 0; i < c.size(); ++i) {
    const char* at = host.data() + c_offset + i * c_size;
    if (dtype == Dtype::bf16 || dtype == Dtype::fp8) {
      uint16_t h;
      std::memcpy(&h, at, sizeof h);
      c[i] = from_bf16(h);
    } else {
      std::memcpy(&c[i], at, sizeof(float));
    }
  }
  return c;
}

}  // namespace paratwin::exec
