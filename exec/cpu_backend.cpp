#include "exec/cpu_backend.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>

#include "exec/communicators.hpp"
#include "exec/mpi_progress.hpp"

namespace paratwin::exec {

namespace {

using workloads::Op;
using workloads::OpKind;

// One BLAS thread per rank: ranks already fill the cores. OpenBLAS reads its environment when it is
// loaded, so ask it directly when it is the BLAS in use.
void one_blas_thread() {
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
}

int64_t floats(double bytes) {
  return static_cast<int64_t>((std::max(0.0, bytes) + 3) / 4);
}

std::string describe(const Op& op, uint32_t index) {
  return std::string(workloads::to_string(op.kind)) + " \"" + op.name + "\" (op " + std::to_string(index) + ")";
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() : epoch_(std::chrono::steady_clock::now()) { one_blas_thread(); }

  std::string name() const override { return "cpu"; }

  void prepare(const workloads::Program& program, int64_t rank) override {
    program_ = &program;
    rank_ = rank;
    comms_ = std::make_unique<Communicators>(program, rank);
    const auto& role = program.roles[static_cast<size_t>(program.role_of(rank))];
    // Workspaces sized for the largest op of each kind; the GEMMs of a batch use consecutive slices.
    int64_t a = 1, b = 1, c = 1, sweep = 1, copy = 1;
    for (const Op& op : role.ops) {
      const auto& g = op.gemm;
      if (op.kind == OpKind::gemm) {
        a = std::max(a, g.batch * g.m * g.k);
        b = std::max(b, g.batch * g.k * g.n);
        c = std::max(c, g.batch * g.m * g.n);
      }
      if (op.kind == OpKind::elementwise || op.kind == OpKind::optimizer) sweep = std::max(sweep, floats(op.bytes) / 3);
      if (op.kind == OpKind::host_transfer) copy = std::max(copy, floats(op.bytes));
    }
    // Every message and collective owns its buffers (several may be in flight at once), allocated and
    // touched here so that no iteration pays for page faults.
    double comm_floats = 0;
    for (uint32_t i = 0; i < role.ops.size(); ++i) {
      const Op& op = role.ops[i];
      if (!workloads::is_collective(op.kind) && !workloads::is_p2p(op.kind)) continue;
      const int64_t n = floats(op.bytes);
      const int64_t p = workloads::is_collective(op.kind) ? program.grid.group_size(op.group) : 1;
      const int64_t whole = (n + p - 1) / p * p;
      comm_floats += 2.0 * static_cast<double>(whole);
      buffers_[i] = {std::vector<float>(static_cast<size_t>(whole), 1.0f),
                     std::vector<float>(workloads::is_p2p(op.kind) ? 0 : static_cast<size_t>(whole), 0.0f)};
      if (4.0 * comm_floats > kMaxWorkspace) break;
    }
    const double total = 4.0 * (static_cast<double>(a + b + c + 2 * sweep + 2 * copy) + comm_floats);
    if (total > kMaxWorkspace)
      throw std::runtime_error("rank " + std::to_string(rank) + ": the CPU backend would need " +
                               std::to_string(static_cast<int64_t>(total / (1 << 20))) +
                               " MiB of workspace for this workload's shapes (at most " +
                               std::to_string(static_cast<int64_t>(kMaxWorkspace / (1 << 20))) +
                               " MiB); run a scaled-down workload");
    a_.assign(static_cast<size_t>(a), 1e-3f);
    b_.assign(static_cast<size_t>(b), 1e-3f);
    c_.assign(static_cast<size_t>(c), 0.0f);
    x_.assign(static_cast<size_t>(sweep), 1.0f);
    y_.assign(static_cast<size_t>(sweep), 0.0f);
    host_.assign(static_cast<size_t>(copy), 0.0f);
    device_.assign(static_cast<size_t>(copy), 0.0f);
    tag_bound_ = tag_bound();
    progress_ = std::make_unique<MpiProgress>([this] { return now(); });
  }

  void start(const Op& op, uint32_t index) override {
    if (workloads::is_collective(op.kind) || workloads::is_p2p(op.kind)) {
      communicate(op, index);
      return;
    }
    const double begin = now();
    switch (op.kind) {
      case OpKind::gemm:
        gemm(op);
        break;
      case OpKind::elementwise:
      case OpKind::optimizer:
        sweep(op);
        break;
      case OpKind::host_transfer:
        std::memcpy(device_.data(), host_.data(), static_cast<size_t>(floats(op.bytes)) * 4);
        break;
      default:  // memory events take no time
        break;
    }
    computed_.push_back({index, begin, now()});
  }

  std::vector<Finished> wait() override {
    std::vector<Finished> out;
    out.swap(computed_);
    progress_->collect(out, out.empty());
    return out;
  }

  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
  }

  void drain() override {
    std::vector<Finished> ignored;
    while (progress_->in_flight() > 0) progress_->collect(ignored, true);
  }

 private:
  static constexpr double kMaxWorkspace = 2.0 * (1u << 30);
  // About 200 us of BLAS per slice here; 64 rows or columns keep the slices efficient.
  static constexpr double kSliceFlops = 20e6;
  static constexpr int kMinSlice = 64;

  // While collectives are in flight, a GEMM runs in slices with a poll between them: MPI advances a
  // collective's rounds only when polled, and a poll from this thread costs microseconds where waking
  // the progress helper costs the GEMM tens (a message needs one poll at each end: op boundaries). Slices split C along
  // the dimension whose other operand is the smaller one (BLAS packs that operand again for every slice), and once
  // nothing is in flight the rest runs in one call.
  void gemm(const Op& op) {
    const auto& g = op.gemm;
    // Row-major C (m×n) = op(A) (m×k) · op(B) (k×n).
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
    const int lda = g.trans_a ? m : k, ldb = g.trans_b ? k : n;
    const bool by_rows = g.n <= g.m;  // slices of rows repack B (k×n), of columns A (m×k)
    const int extent = by_rows ? m : n;
    const double flops_per_line = 2.0 * static_cast<double>(g.k) * static_cast<double>(by_rows ? g.n : g.m);
    const int slice = std::clamp(static_cast<int>(kSliceFlops / flops_per_line), kMinSlice, std::max(extent, 1));
    const auto trans_a = g.trans_a ? CblasTrans : CblasNoTrans, trans_b = g.trans_b ? CblasTrans : CblasNoTrans;
    for (int64_t i = 0; i < g.batch; ++i) {
      const float* a = a_.data() + i * g.m * g.k;
      const float* b = b_.data() + i * g.k * g.n;
      float* c = c_.data() + i * g.m * g.n;
      for (int first = 0; first < extent;) {
        const int count = progress_->collectives_in_flight() > 0 ? std::min(slice, extent - first) : extent - first;
        if (by_rows)  // rows of op(A): row r at a + r·lda, or at column r when A is stored transposed
          cblas_sgemm(CblasRowMajor, trans_a, trans_b, count, n, k, 1.0f,
                      g.trans_a ? a + first : a + static_cast<int64_t>(first) * lda, lda, b, ldb, 0.0f,
                      c + static_cast<int64_t>(first) * n, n);
        else  // columns of op(B): column j at b + j, or at row j when B is stored transposed
          cblas_sgemm(CblasRowMajor, trans_a, trans_b, m, count, k, 1.0f, a, lda,
                      g.trans_b ? b + static_cast<int64_t>(first) * ldb : b + first, ldb, 0.0f, c + first, n);
        first += count;
        if (first < extent) progress_->poll();
      }
    }
  }

  // Reads two arrays and writes one: 12 bytes per element, the op's memory traffic.
  void sweep(const Op& op) {
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(x_.size()), floats(op.bytes) / 3);
    float* y = y_.data();
    const float* x = x_.data();
    for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] + y[i];
  }

  void communicate(const Op& op, uint32_t index) {
    auto& bufs = buffers_.at(index);
    MpiWork w;
    w.op = index;
    w.what = "rank " + std::to_string(rank_) + ": " + describe(op, index);
    w.start = now();
    if (workloads::is_p2p(op.kind)) {
      const int pipe = program_->grid.axis_index("pipe");
      const int peer = static_cast<int>(program_->grid.with_coord(rank_, pipe, op.peer_stage));
      const int tag = static_cast<int>(op.tag % static_cast<uint64_t>(tag_bound_));
      float* data = bufs.first.data();
      const int count = static_cast<int>(bufs.first.size());
      if (op.kind == OpKind::send)
        w.launch = [=](MPI_Request* r) { return MPI_Isend(data, count, MPI_FLOAT, peer, tag, MPI_COMM_WORLD, r); };
      else
        w.launch = [=](MPI_Request* r) { return MPI_Irecv(data, count, MPI_FLOAT, peer, tag, MPI_COMM_WORLD, r); };
      progress_->submit(std::move(w));
      return;
    }
    w.collective = true;
    MPI_Comm comm = comms_->of(op.group);
    // The buffers were sized in prepare() to a whole number of members' shares.
    const int whole = static_cast<int>(bufs.first.size());
    const int share = whole / static_cast<int>(program_->grid.group_size(op.group));
    float* in = bufs.first.data();
    float* out = bufs.second.data();
    const int root = std::max(0, op.root);
    switch (op.kind) {
      case OpKind::all_reduce:
        w.launch = [=](MPI_Request* r) { return MPI_Iallreduce(in, out, whole, MPI_FLOAT, MPI_SUM, comm, r); };
        break;
      case OpKind::reduce_scatter:  // bytes: the input
        w.launch = [=](MPI_Request* r) {
          return MPI_Ireduce_scatter_block(in, out, share, MPI_FLOAT, MPI_SUM, comm, r);
        };
        break;
      case OpKind::all_gather:  // bytes: the output
        w.launch = [=](MPI_Request* r) { return MPI_Iallgather(in, share, MPI_FLOAT, out, share, MPI_FLOAT, comm, r); };
        break;
      case OpKind::all_to_all:
        w.launch = [=](MPI_Request* r) { return MPI_Ialltoall(in, share, MPI_FLOAT, out, share, MPI_FLOAT, comm, r); };
        break;
      case OpKind::broadcast:
        w.launch = [=](MPI_Request* r) { return MPI_Ibcast(in, whole, MPI_FLOAT, root, comm, r); };
        break;
      case OpKind::reduce:
        w.launch = [=](MPI_Request* r) { return MPI_Ireduce(in, out, whole, MPI_FLOAT, MPI_SUM, root, comm, r); };
        break;
      default:
        throw std::logic_error("not a collective: " + describe(op, index));
    }
    progress_->submit(std::move(w));
  }

  static int tag_bound() {
    int* bound = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &bound, &found);
    return found && bound ? *bound : 32767;
  }

  std::chrono::steady_clock::time_point epoch_;
  const workloads::Program* program_ = nullptr;
  int64_t rank_ = 0;
  int tag_bound_ = 32767;  // MPI_TAG_UB
  std::unique_ptr<Communicators> comms_;
  std::unique_ptr<MpiProgress> progress_;
  std::vector<float> a_, b_, c_, x_, y_, host_, device_;
  std::vector<Finished> computed_;
  // Send and receive buffers of every message and collective, by op.
  std::map<uint32_t, std::pair<std::vector<float>, std::vector<float>>> buffers_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace paratwin::exec
