// The GPU backend: one CUDA stream per Program stream, cuBLAS GEMMs, NCCL collectives and pipeline
// messages, CUDA events around every op. Ops are enqueued by start() and return at once; wait() polls
// their end events and converts event times to the host clock of now().
#include "exec/cuda_backend.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "exec/cuda_comms.hpp"
#include "exec/cuda_ops.hpp"
#include "exec/cuda_support.hpp"

namespace paratwin::exec {
namespace {

using gpu::Where;
using workloads::kStreams;
using workloads::Op;
using workloads::OpKind;

// Left free at prepare for what NCCL (connections set up at first use) and cuBLAS allocate later.
constexpr size_t kReserveBytes = size_t{1} << 30;
// wait() polls without sleeping this long (as CUDA's own synchronisation spins by default), so that the
// next op of a stream is enqueued within microseconds of the last one's end: a GEMM of a layer takes
// milliseconds, and sleeping between polls left the GPU idle for tens of microseconds per op. Longer
// waits (a pipeline bubble, a peer late to a collective) sleep between polls.
constexpr auto kSpinFor = std::chrono::milliseconds(50);
constexpr auto kPollSleep = std::chrono::microseconds(20);
// Event times are float milliseconds from the reference event: start() records a fresh reference when
// the device is idle and the last one is older than this, so that they stay good to a microsecond.
constexpr double kReferenceMaxAge = 1.0;
// How often waiting checks the communicators for asynchronous errors (a dead peer hangs an op).
constexpr auto kAsyncCheckEvery = std::chrono::milliseconds(100);

size_t stream_index(workloads::Stream s) {
  return static_cast<size_t>(s);
}

std::string gib(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

// Fills `bytes` of device memory with pseudo-random 16-bit values that are finite and moderate in every
// dtype: as bf16 a random sign and mantissa and a magnitude of 1/64 to 1/4, as fp16 1 to 2 in magnitude,
// and, taken in pairs, as fp32 like bf16. GEMM operands that are not zeros (on zeros the tensor cores
// run faster than on data), whose products and sums stay far from overflow. Always the same values.
void fill_inputs(char* device, size_t bytes, const Where& where) {
  if (!bytes) return;
  constexpr size_t kPattern = size_t{8} << 20;
  const size_t first = std::min(bytes, kPattern);
  std::vector<uint16_t> pattern(first / 2 + 1);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint16_t& v : pattern) {
    x ^= x << 13;  // xorshift64
    x ^= x >> 7;
    x ^= x << 17;
    const auto r = static_cast<uint32_t>(x >> 32);
    v = static_cast<uint16_t>((r & 0x8000u) | ((0x79u + ((r >> 8) & 3u)) << 7) | (r & 0x7fu));
  }
  PARATWIN_GPU_CHECK(cudaMemcpy(device, pattern.data(), first, cudaMemcpyHostToDevice), where);
  // The rest by doubling what is there, on the device.
  for (size_t done = first; done < bytes;) {
    const size_t n = std::min(done, bytes - done);
    PARATWIN_GPU_CHECK(cudaMemcpy(device + done, device, n, cudaMemcpyDeviceToDevice), where);
    done += n;
  }
}

class CudaBackend final : public Backend {
 public:
  CudaBackend() : origin_(Clock::now()) {}
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  void prepare(const workloads::Program& program, int64_t rank) override;
  void start(const Op& op, uint32_t index) override;
  std::vector<Finished> wait() override;
  double now() const override { return std::chrono::duration<double>(Clock::now() - origin_).count(); }
  void drain() override;

 private:
  using Clock = std::chrono::steady_clock;
  struct InFlight {
    Op op;  // a copy: messages name it after the caller's op list may be gone
    uint32_t index = 0;
    cudaEvent_t begin = nullptr, end = nullptr;
  };

  // Marks the backend failed when f throws, so that the destructor aborts instead of waiting.
  template <class F>
  decltype(auto) guarded(F&& f) {
    try {
      return f();
    } catch (...) {
      failed_ = true;
      throw;
    }
  }
  Where at(const char* step) const { return {rank_, nullptr, 0, step}; }
  void agree(const std::string& problem, const char* what) const;
  void select_device();
  void create_streams(const workloads::Role& role);
  void allocate(const workloads::Role& role);
  void anchor();
  cudaEvent_t take_event(const Where& where);
  void poll(std::vector<Finished>& out);
  void check_peers();
  double host_seconds(cudaEvent_t event, const Where& where) const;

  Clock::time_point origin_;
  int64_t rank_ = -1;
  int device_ = -1;
  bool prepared_ = false, failed_ = false;
  gpu::Communicators comms_;
  gpu::OpContext context_;  // streams, cuBLAS handles, buffers: what enqueuing an op uses
  std::vector<cudaEvent_t> events_, idle_events_;
  cudaEvent_t reference_ = nullptr;  // recorded at reference_seconds_ on the host clock
  double reference_seconds_ = 0;
  std::vector<InFlight> in_flight_;
  std::vector<Finished> ended_;  // harvested by drain(), returned by the next wait()
  Clock::time_point last_peer_check_;
};

CudaBackend::~CudaBackend() {
  // Errors are ignored here. After a failure, or with ops still in flight, NCCL kernels may wait for
  // peers that are gone: abort the communicators first, since cudaFree would wait for those kernels.
  const bool clean = !failed_ && in_flight_.empty();
  gpu::OpContext& c = context_;
  if (clean) {
    for (cudaStream_t s : c.streams)
      if (s) (void)cudaStreamSynchronize(s);
  } else {
    comms_.abort();
  }
  comms_.release();
  for (cublasHandle_t h : c.blas)
    if (h) (void)cublasDestroy(h);
  for (void* a : c.arenas)
    if (a) (void)cudaFree(a);
  for (void* w : c.gemm_workspace)
    if (w) (void)cudaFree(w);
  if (c.host) (void)cudaFreeHost(c.host);
  for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
  if (reference_) (void)cudaEventDestroy(reference_);
  for (cudaStream_t s : c.streams)
    if (s) (void)cudaStreamDestroy(s);
}

// Setup failures that one rank sees (no device, too little memory) are agreed on by all ranks, so that
// every rank throws instead of the others waiting forever in the next collective step.
void CudaBackend::agree(const std::string& problem, const char* what) const {
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) throw std::runtime_error(gpu::describe(at(what)) + ": " + problem);
  if (!all_ok) throw std::runtime_error(gpu::describe(at(what)) + ": another rank failed this step (see its message)");
}

void CudaBackend::select_device() {
  // Ranks of one node share its devices round-robin; a shared-memory split finds the node's ranks
  // whatever the launcher.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, static_cast<int>(rank_), MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  const CudaDevices devices = cuda_devices();
  agree(devices.count > 0 ? std::string() : "no CUDA device: " + devices.why, "prepare: device");
  device_ = local % devices.count;
  PARATWIN_GPU_CHECK(cudaSetDevice(device_), at("prepare: device"));
}

void CudaBackend::create_streams(const workloads::Role& role) {
  const Where where = at("prepare: streams");
  // Non-blocking: the legacy default stream must not serialise the Program's streams.
  for (cudaStream_t& s : context_.streams)
    PARATWIN_GPU_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), where);
  for (const Op& op : role.ops) {
    if (op.kind != OpKind::gemm) continue;
    const size_t s = stream_index(op.stream);
    if (op.dtype == workloads::Dtype::fp8 && !context_.gemm_workspace[s])
      PARATWIN_GPU_CHECK(cudaMalloc(&context_.gemm_workspace[s], gpu::kGemmWorkspace), where);
    cublasHandle_t& h = context_.blas[s];
    if (h) continue;
    PARATWIN_GPU_CHECK(cublasCreate(&h), where);
    PARATWIN_GPU_CHECK(cublasSetStream(h, context_.streams[s]), where);
  }
  PARATWIN_GPU_CHECK(cudaEventCreate(&reference_), where);
}

void CudaBackend::allocate(const workloads::Role& role) {
  // Per stream: the largest input and the largest output of its ops, and the op that needs the most.
  std::array<size_t, kStreams> inputs{}, outputs{}, largest_bytes{};
  std::array<uint32_t, kStreams> largest{};
  size_t host = 0;
  for (uint32_t i = 0; i < role.ops.size(); ++i) {
    const Op& op = role.ops[i];
    const gpu::Footprint f = gpu::footprint(op, context_.grid);
    const size_t s = stream_index(op.stream);
    inputs[s] = std::max(inputs[s], f.inputs);
    outputs[s] = std::max(outputs[s], f.outputs);
    if (f.inputs + f.outputs > largest_bytes[s]) {
      largest_bytes[s] = f.inputs + f.outputs;
      largest[s] = i;
    }
    if (op.kind == OpKind::host_transfer) host = std::max(host, static_cast<size_t>(op.bytes));
  }
  size_t total = 0;
  size_t top = 0;
  for (size_t s = 0; s < inputs.size(); ++s) {
    total += inputs[s] + outputs[s];
    if (largest_bytes[s] > largest_bytes[top]) top = s;
  }
  size_t free_bytes = 0, device_bytes = 0;
  PARATWIN_GPU_CHECK(cudaMemGetInfo(&free_bytes, &device_bytes), at("prepare: buffers"));
  std::string problem;
  if (total + kReserveBytes > free_bytes)
    problem = "the buffers need " + gib(total) + " (" + std::to_string(total) + " bytes) but device " +
              std::to_string(device_) + " has " + gib(free_bytes) + " free, of which " + gib(kReserveBytes) +
              " are kept for NCCL and cuBLAS; the largest is for " +
              gpu::describe(role.ops[largest[top]], largest[top]) + ": " + gib(largest_bytes[top]) + " (" +
              std::to_string(largest_bytes[top]) + " bytes)";
  agree(problem, "prepare: buffers");

  const Where where = at("prepare: buffers");
  for (size_t s = 0; s < inputs.size(); ++s) {
    if (!inputs[s] && !outputs[s]) continue;
    PARATWIN_GPU_CHECK(cudaMalloc(&context_.arenas[s], inputs[s] + outputs[s]), where);
    char* arena = static_cast<char*>(context_.arenas[s]);
    context_.outputs[s] = inputs[s];
    fill_inputs(arena, inputs[s], where);
    if (outputs[s]) PARATWIN_GPU_CHECK(cudaMemset(arena + inputs[s], 0, outputs[s]), where);
  }
  if (host) PARATWIN_GPU_CHECK(cudaMallocHost(&context_.host, host), where);
}

// Records the reference event on an idle device; its host time is the middle of the recording call
// and its completion, within a few microseconds of the event's device time.
void CudaBackend::anchor() {
  const Where where = at("clock reference");
  for (cudaStream_t s : context_.streams) PARATWIN_GPU_CHECK(cudaStreamSynchronize(s), where);
  const double before = now();
  PARATWIN_GPU_CHECK(cudaEventRecord(reference_, context_.streams[0]), where);
  PARATWIN_GPU_CHECK(cudaEventSynchronize(reference_), where);
  reference_seconds_ = 0.5 * (before + now());
}

void CudaBackend::prepare(const workloads::Program& program, int64_t rank) {
  guarded([&] {
    rank_ = rank;
    if (prepared_) throw std::logic_error(gpu::describe(at("prepare")) + ": prepare called twice");
    int initialised = 0, world_size = 0, world_rank = 0;
    MPI_Initialized(&initialised);
    if (!initialised) throw std::runtime_error(gpu::describe(at("prepare")) + ": MPI is not initialised");
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (world_size != program.grid.size() || world_rank != rank)
      throw std::runtime_error(gpu::describe(at("prepare")) + ": the Program has " +
                               std::to_string(program.grid.size()) + " ranks and this is its rank " +
                               std::to_string(rank) + ", but MPI_COMM_WORLD has " + std::to_string(world_size) +
                               " ranks and this is its rank " + std::to_string(world_rank));
    const workloads::Role& role = program.roles.at(static_cast<size_t>(program.role_of(rank)));
    context_.grid = program.grid;
    context_.comms = &comms_;
    select_device();
    create_streams(role);
    comms_.build(program, rank);
    allocate(role);
    anchor();
    last_peer_check_ = Clock::now();
    prepared_ = true;
  });
}

cudaEvent_t CudaBackend::take_event(const Where& where) {
  if (idle_events_.empty()) {
    cudaEvent_t e = nullptr;
    PARATWIN_GPU_CHECK(cudaEventCreate(&e), where);
    events_.push_back(e);
    return e;
  }
  cudaEvent_t e = idle_events_.back();
  idle_events_.pop_back();
  return e;
}

void CudaBackend::start(const Op& op, uint32_t index) {
  guarded([&] {
    const Where where{rank_, &op, index, ""};
    if (!prepared_) throw std::logic_error(gpu::describe(where) + ": started before prepare");
    if (in_flight_.empty() && now() - reference_seconds_ > kReferenceMaxAge) anchor();
    const cudaStream_t stream = context_.streams[stream_index(op.stream)];
    InFlight f{op, index, take_event(where), take_event(where)};
    PARATWIN_GPU_CHECK(cudaEventRecord(f.begin, stream), where);
    gpu::enqueue(context_, op, where);
    PARATWIN_GPU_CHECK(cudaEventRecord(f.end, stream), where);
    in_flight_.push_back(f);
  });
}

double CudaBackend::host_seconds(cudaEvent_t event, const Where& where) const {
  float ms = 0;
  PARATWIN_GPU_CHECK(cudaEventElapsedTime(&ms, reference_, event), where);
  return reference_seconds_ + 1e-3 * static_cast<double>(ms);
}

void CudaBackend::poll(std::vector<Finished>& out) {
  for (InFlight& f : in_flight_) {
    const Where where{rank_, &f.op, f.index, ""};
    const cudaError_t state = cudaEventQuery(f.end);
    if (state == cudaErrorNotReady) continue;
    gpu::check(state, "cudaEventQuery", where);
    // The duration from the op's own two events: exact whatever the age of the reference.
    float ms = 0;
    PARATWIN_GPU_CHECK(cudaEventElapsedTime(&ms, f.begin, f.end), where);
    const double begin = host_seconds(f.begin, where);
    out.push_back({f.index, begin, begin + 1e-3 * static_cast<double>(ms)});
    idle_events_.push_back(f.begin);
    idle_events_.push_back(f.end);
    f.end = nullptr;
  }
  std::erase_if(in_flight_, [](const InFlight& f) { return f.end == nullptr; });
}

// An op whose peer died never ends; NCCL reports it on the communicator, and the oldest op in flight
// is named as the one waited for.
void CudaBackend::check_peers() {
  if (Clock::now() - last_peer_check_ < kAsyncCheckEvery || in_flight_.empty()) return;
  last_peer_check_ = Clock::now();
  comms_.check_async({rank_, &in_flight_.front().op, in_flight_.front().index, ""});
}

std::vector<Finished> CudaBackend::wait() {
  return guarded([&] {
    if (!prepared_) throw std::logic_error(gpu::describe(at("wait")) + ": wait before prepare");
    std::vector<Finished> out = std::exchange(ended_, {});
    const Clock::time_point begin = Clock::now();
    while (true) {
      poll(out);
      // With nothing in flight there is nothing to wait for: return (possibly empty) at once.
      if (!out.empty() || in_flight_.empty()) return out;
      check_peers();
      if (Clock::now() - begin < kSpinFor)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(kPollSleep);
    }
  });
}

void CudaBackend::drain() {
  guarded([&] {
    if (!prepared_) throw std::logic_error(gpu::describe(at("drain")) + ": drain before prepare");
    while (true) {
      poll(ended_);
      if (in_flight_.empty()) break;
      check_peers();
      std::this_thread::sleep_for(kPollSleep);
    }
    // Event times are floats in milliseconds from the reference: a fresh reference per iteration keeps
    // them to a microsecond. Every op in flight was harvested against the old one above.
    anchor();
  });
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

}  // namespace paratwin::exec
