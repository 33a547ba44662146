#include "exec/verify.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "exec/communicators.hpp"

namespace paratwin::exec {

namespace {

using workloads::Op;
using workloads::OpKind;
using workloads::Phase;

// A dense row-major matrix of doubles.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& at(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
  double at(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
};

// Every rank generates the same matrix from its id and the global indices: no data has to be sent to
// set a test up, and each rank builds exactly its block.
double value(int id, int64_t i, int64_t j) {
  uint64_t x = static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(i) * 0xBF58476D1CE4E5B9ull ^
               static_cast<uint64_t>(j) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD33ull;
  x ^= x >> 29;
  return static_cast<double>(x >> 11) / 9007199254740992.0 - 0.5;
}

Mat block(int id, int64_t rows, int64_t cols, int64_t r0 = 0, int64_t c0 = 0) {
  Mat m(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m.at(i, j) = value(id, r0 + i, c0 + j);
  return m;
}

Mat sub(const Mat& m, int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
  Mat s(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) s.at(i, j) = m.at(r0 + i, c0 + j);
  return s;
}

Mat transpose(const Mat& m) {
  Mat t(m.cols, m.rows);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) t.at(j, i) = m.at(i, j);
  return t;
}

Mat mul(const Mat& a, const Mat& b) {
  Mat c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k) {
      const double x = a.at(i, k);
      for (int64_t j = 0; j < b.cols; ++j) c.at(i, j) += x * b.at(k, j);
    }
  return c;
}

double gelu(double x) {
  return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
double gelu_grad(double x) {
  const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x), t = std::tanh(u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * x * x);
}
Mat map(const Mat& m, double (*f)(double)) {
  Mat out = m;
  for (double& x : out.v) x = f(x);
  return out;
}
Mat hadamard(const Mat& a, const Mat& b) {
  Mat out = a;
  for (size_t i = 0; i < out.v.size(); ++i) out.v[i] *= b.v[i];
  return out;
}

void all_reduce(Mat& m, MPI_Comm comm) {
  if (comm != MPI_COMM_NULL)
    MPI_Allreduce(MPI_IN_PLACE, m.v.data(), static_cast<int>(m.v.size()), MPI_DOUBLE, MPI_SUM, comm);
}

// The largest relative difference, over every rank.
double compare(const Mat& got, const Mat& want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.v.size() && i < got.v.size(); ++i) {
    diff = std::max(diff, std::abs(got.v[i] - want.v[i]));
    scale = std::max(scale, std::abs(want.v[i]));
  }
  if (got.v.size() != want.v.size()) diff = INFINITY;
  double local = scale > 0 ? diff / scale : diff, global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return global;
}

// The first op of the first micro-batch with this name and phase (its first layer that has one).
const Op* find(const workloads::Role& role, const char* name, Phase phase) {
  for (const Op& op : role.ops)
    if (op.phase == phase && op.micro_batch <= 0 && std::strcmp(op.name, name) == 0) return &op;
  return nullptr;
}

struct Context {
  const workloads::Workload& w;
  const workloads::Program& program;
  int64_t rank;
  const workloads::Role& role;
  Communicators comms;
  double e;  // bytes per element of the training dtype, as the Program counts bytes
  MPI_Comm comm(workloads::AxisMask mask) const {
    return program.grid.group_size(mask) > 1 ? comms.of(mask) : MPI_COMM_NULL;
  }
};

// Every rank agrees on whether the Program describes the algorithm: a problem seen on one is reported by all.
std::string agree(const std::string& mine) {
  int bad = mine.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any ? (mine.empty() ? "another rank found the Program inconsistent" : mine) : "";
}

void expect(std::string& problem, bool ok, const std::string& what) {
  if (!ok && problem.empty()) problem = what;
}

// Megatron 1-D: fc1 column-parallel (output columns split over the tensor group), fc2 row-parallel, one
// all-reduce forward (fc2's output) and one backward (the input gradient).
void megatron_mlp(Context& c, std::vector<Check>& out) {
  const auto& grid = c.program.grid;
  const auto tensor = grid.mask("tensor");
  const int64_t t = grid.group_size(tensor), i = grid.index_in_group(c.rank, tensor);
  const Op* fc1 = find(c.role, "fc1", Phase::forward);
  const Op* fc2 = find(c.role, "fc2", Phase::forward);
  const Op* ar = find(c.role, "fc2.all_reduce", Phase::forward);
  const Op* dar = find(c.role, "mlp.dgrad.all_reduce", Phase::backward);
  std::string problem;
  expect(problem, fc1 && fc2 && ar && dar, "the Program has no fc1, fc2, fc2.all_reduce and mlp.dgrad.all_reduce ops");
  const int64_t T = fc1 ? fc1->gemm.m : 0, fl = fc1 ? fc1->gemm.n : 0, h = fc1 ? fc1->gemm.k : 0;
  if (problem.empty()) {
    expect(problem, fl * t == c.w.model.ffn_hidden,
           "fc1 computes " + std::to_string(fl) + " columns per rank; times " + std::to_string(t) +
               " tensor ranks is not ffn_hidden = " + std::to_string(c.w.model.ffn_hidden));
    expect(problem, h == c.w.model.hidden && fc2->gemm.m == T && fc2->gemm.k == fl && fc2->gemm.n == h,
           "fc2's GEMM is not (tokens × ffn/t) · (ffn/t × hidden)");
    expect(problem, ar->group == tensor && ar->bytes == static_cast<double>(T * h) * c.e,
           "fc2.all_reduce is not T × hidden elements over the tensor group");
    expect(problem, dar->group == tensor && dar->bytes == static_cast<double>(T * h) * c.e,
           "mlp.dgrad.all_reduce is not T × hidden elements over the tensor group");
  }
  problem = agree(problem);
  if (!problem.empty()) {
    out.push_back({"1-D MLP (fc1, fc2)", 0, kVerifyTolerance, problem});
    return;
  }
  const int64_t f = fl * t;
  const Mat X = block(1, T, h), A = block(2, h, f), B = block(3, f, h), dZ = block(4, T, h);
  // Single-rank reference.
  const Mat P = mul(X, A), Y = map(P, gelu), Z = mul(Y, B);
  const Mat dY = hadamard(mul(dZ, transpose(B)), map(P, gelu_grad));
  const Mat dB = mul(transpose(Y), dZ), dA = mul(transpose(X), dY), dX = mul(dY, transpose(A));
  // This rank's shard, the way the Program splits it.
  const Mat Ai = sub(A, 0, h, i * fl, fl), Bi = sub(B, i * fl, fl, 0, h);
  const Mat Pi = mul(X, Ai), Yi = map(Pi, gelu);
  Mat Zi = mul(Yi, Bi);
  all_reduce(Zi, c.comm(tensor));
  const Mat dYi = hadamard(mul(dZ, transpose(Bi)), map(Pi, gelu_grad));
  Mat dXi = mul(dYi, transpose(Ai));
  all_reduce(dXi, c.comm(tensor));
  out.push_back({"1-D MLP: output (fc2.all_reduce)", compare(Zi, Z), kVerifyTolerance, ""});
  out.push_back({"1-D MLP: input gradient (mlp.dgrad.all_reduce)", compare(dXi, dX), kVerifyTolerance, ""});
  out.push_back({"1-D MLP: fc1 weight gradient (column shard)",
                 compare(mul(transpose(X), dYi), sub(dA, 0, h, i * fl, fl)), kVerifyTolerance, ""});
  out.push_back({"1-D MLP: fc2 weight gradient (row shard)", compare(mul(transpose(Yi), dZ), sub(dB, i * fl, fl, 0, h)),
                 kVerifyTolerance, ""});
}

// Causal self-attention of the heads whose Q, K, V columns [q|k|v per head] `qkv` holds, sequence by
// sequence; returns the context (tokens × heads·d) and keeps the softmax for the backward pass.
struct Attention {
  int64_t seq = 0, heads = 0, d = 0;
  std::vector<Mat> probs;  // per (sequence, head)
  Mat forward(const Mat& qkv) {
    const int64_t T = qkv.rows, B = T / seq;
    Mat ctx(T, heads * d);
    probs.clear();
    const double scale = 1 / std::sqrt(static_cast<double>(d));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t a = 0; a < heads; ++a) {
        Mat P(seq, seq);
        for (int64_t i = 0; i < seq; ++i) {
          double top = -INFINITY;
          for (int64_t j = 0; j <= i; ++j) {
            double dot = 0;
            for (int64_t k = 0; k < d; ++k)
              dot += qkv.at(b * seq + i, a * 3 * d + k) * qkv.at(b * seq + j, a * 3 * d + d + k);
            P.at(i, j) = dot * scale;
            top = std::max(top, P.at(i, j));
          }
          double sum = 0;
          for (int64_t j = 0; j <= i; ++j) sum += P.at(i, j) = std::exp(P.at(i, j) - top);
          for (int64_t j = 0; j <= i; ++j) P.at(i, j) /= sum;
          for (int64_t j = 0; j <= i; ++j)
            for (int64_t k = 0; k < d; ++k)
              ctx.at(b * seq + i, a * d + k) += P.at(i, j) * qkv.at(b * seq + j, a * 3 * d + 2 * d + k);
        }
        probs.push_back(std::move(P));
      }
    return ctx;
  }
  // The gradient of the Q, K, V columns from the context's gradient (softmax backward).
  Mat backward(const Mat& qkv, const Mat& dctx) const {
    const int64_t T = qkv.rows, B = T / seq;
    Mat dqkv(T, heads * 3 * d);
    const double scale = 1 / std::sqrt(static_cast<double>(d));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t a = 0; a < heads; ++a) {
        const Mat& P = probs[static_cast<size_t>(b * heads + a)];
        for (int64_t i = 0; i < seq; ++i) {
          std::vector<double> dP(static_cast<size_t>(i + 1), 0.0);
          double dot = 0;
          for (int64_t j = 0; j <= i; ++j) {
            for (int64_t k = 0; k < d; ++k) {
              dP[static_cast<size_t>(j)] +=
                  dctx.at(b * seq + i, a * d + k) * qkv.at(b * seq + j, a * 3 * d + 2 * d + k);
              dqkv.at(b * seq + j, a * 3 * d + 2 * d + k) += P.at(i, j) * dctx.at(b * seq + i, a * d + k);  // dV
            }
            dot += dP[static_cast<size_t>(j)] * P.at(i, j);
          }
          for (int64_t j = 0; j <= i; ++j) {
            const double ds = P.at(i, j) * (dP[static_cast<size_t>(j)] - dot) * scale;
            for (int64_t k = 0; k < d; ++k) {
              dqkv.at(b * seq + i, a * 3 * d + k) += ds * qkv.at(b * seq + j, a * 3 * d + d + k);  // dQ
              dqkv.at(b * seq + j, a * 3 * d + d + k) += ds * qkv.at(b * seq + i, a * 3 * d + k);  // dK
            }
          }
        }
      }
    return dqkv;
  }
};

// Megatron 1-D self-attention: QKV column-parallel by heads, the attention of the local heads, proj
// row-parallel and all-reduced; backward through the softmax to the input gradient's all-reduce.
void megatron_attention(Context& c, std::vector<Check>& out) {
  const auto& grid = c.program.grid;
  const auto tensor = grid.mask("tensor");
  const int64_t t = grid.group_size(tensor), i = grid.index_in_group(c.rank, tensor);
  const Op* qkv = find(c.role, "qkv", Phase::forward);
  const Op* proj = find(c.role, "proj", Phase::forward);
  const Op* ar = find(c.role, "proj.all_reduce", Phase::forward);
  const Op* dar = find(c.role, "attention.dgrad.all_reduce", Phase::backward);
  const int64_t h = c.w.model.hidden, a = c.w.model.heads, S = c.w.model.seq_len, d = h / a;
  std::string problem;
  expect(problem, qkv && proj && ar && dar,
         "the Program has no qkv, proj, proj.all_reduce and attention.dgrad.all_reduce ops");
  const int64_t T = qkv ? qkv->gemm.m : 0;
  if (problem.empty()) {
    expect(problem, qkv->gemm.n * t == 3 * h && qkv->gemm.k == h,
           "qkv computes " + std::to_string(qkv->gemm.n) + " columns per rank; times " + std::to_string(t) +
               " is not 3 × hidden");
    expect(problem, proj->gemm.k * t == h && proj->gemm.n == h && proj->gemm.m == T,
           "proj is not (tokens × hidden/t) · (hidden/t × hidden)");
    expect(problem, a % t == 0, "the heads do not split over the tensor group");
    expect(problem, ar->group == tensor && dar->group == tensor && ar->bytes == static_cast<double>(T * h) * c.e,
           "the attention's all-reduces are not T × hidden over the tensor group");
    expect(problem, T % S == 0, "a rank's tokens are not whole sequences");
  }
  problem = agree(problem);
  if (!problem.empty()) {
    out.push_back({"1-D attention (qkv, proj)", 0, kVerifyTolerance, problem});
    return;
  }
  const int64_t local = a / t;
  const Mat X = block(500, T, h), Wqkv = block(501, h, 3 * h), Wproj = block(502, h, h), dZ = block(503, T, h);
  Attention whole{S, a, d, {}}, mine{S, local, d, {}};
  // Reference: every head.
  const Mat QKV = mul(X, Wqkv), ctx = whole.forward(QKV), Z = mul(ctx, Wproj);
  const Mat dctx = mul(dZ, transpose(Wproj)), dQKV = whole.backward(QKV, dctx);
  const Mat dX = mul(dQKV, transpose(Wqkv)), dWqkv = mul(transpose(X), dQKV), dWproj = mul(transpose(ctx), dZ);
  // This rank's heads: columns [i·3h/t, (i+1)·3h/t) of QKV, rows [i·h/t, (i+1)·h/t) of proj.
  const Mat Wq = sub(Wqkv, 0, h, i * 3 * h / t, 3 * h / t), Wp = sub(Wproj, i * h / t, h / t, 0, h);
  const Mat QKVi = mul(X, Wq), ctxi = mine.forward(QKVi);
  Mat Zi = mul(ctxi, Wp);
  all_reduce(Zi, c.comm(tensor));
  const Mat dQKVi = mine.backward(QKVi, mul(dZ, transpose(Wp)));
  Mat dXi = mul(dQKVi, transpose(Wq));
  all_reduce(dXi, c.comm(tensor));
  out.push_back({"1-D attention: output (proj.all_reduce)", compare(Zi, Z), kVerifyTolerance, ""});
  out.push_back({"1-D attention: input gradient (attention.dgrad.all_reduce)", compare(dXi, dX), kVerifyTolerance, ""});
  out.push_back({"1-D attention: qkv weight gradient (head shard)",
                 compare(mul(transpose(X), dQKVi), sub(dWqkv, 0, h, i * 3 * h / t, 3 * h / t)), kVerifyTolerance, ""});
  out.push_back({"1-D attention: proj weight gradient (head shard)",
                 compare(mul(transpose(ctxi), dZ), sub(dWproj, i * h / t, h / t, 0, h)), kVerifyTolerance, ""});
}

// AxoNN 3-D ([singh2025dissertation] Algorithm 3) for one FC layer: the weight block W[in][out] all-gathered over z,
// the output all-reduced over the input axis, the input gradient over the output axis, the weight
// gradient reduce-scattered over z. `name` is the layer (qkv: normal; proj: transposed).
void axonn_fc(Context& c, const char* name, std::vector<Check>& out) {
  const auto& grid = c.program.grid;
  const std::string n = name;
  const Op* gemm = find(c.role, name, Phase::forward);
  const Op* ag = find(c.role, (n + ".all_gather_z").c_str(), Phase::forward);
  const Op* ar = find(c.role, (n + ".all_reduce_y").c_str(), Phase::forward);
  const Op* dar = find(c.role, (n + ".dgrad.all_reduce_x").c_str(), Phase::backward);
  const Op* rs = find(c.role, (n + ".wgrad.reduce_scatter_z").c_str(), Phase::backward);
  const auto z = grid.mask("z");
  const int64_t gz = grid.group_size(z);
  std::string problem;
  expect(problem, gemm != nullptr, "the Program has no \"" + n + "\" GEMM");
  // Axes: the output all-reduce runs over the axis that splits the GEMM's inner dimension.
  // (A group of one rank has no collective; the other axis is then the remaining one of x and y.)
  const workloads::AxisMask xm = grid.mask("x"), ym = grid.mask("y");
  workloads::AxisMask in = ym, outm = xm;
  if (ar) {
    in = ar->group;
    outm = in == xm ? ym : xm;
  } else if (dar) {
    outm = dar->group;
    in = outm == xm ? ym : xm;
  }
  const int64_t gin = grid.group_size(in), gout = grid.group_size(outm);
  const int64_t rows = gemm ? gemm->gemm.m : 0, cols = gemm ? gemm->gemm.n : 0, inner = gemm ? gemm->gemm.k : 0;
  const int64_t M = rows * gz, N = cols * gout, K = inner * gin;
  if (problem.empty()) {
    expect(problem, M == c.w.training.micro_batch * c.w.model.seq_len,
           n + ": rows × G_z = " + std::to_string(M) + " is not micro_batch × seq_len");
    expect(problem, (gin == 1) == (ar == nullptr) && (gout == 1) == (dar == nullptr) && (gz == 1) == (ag == nullptr),
           n + ": its collectives do not match the groups of more than one rank");
    if (ag)
      expect(problem, ag->group == z && ag->bytes == static_cast<double>(inner * cols) * c.e,
             n + ".all_gather_z does not gather the " + std::to_string(inner) + " × " + std::to_string(cols) +
                 " weight block over z");
    if (ar)
      expect(problem, ar->bytes == static_cast<double>(rows * cols) * c.e,
             n + "'s output all-reduce is not rows × cols");
    if (dar)
      expect(problem, dar->bytes == static_cast<double>(rows * inner) * c.e,
             n + "'s input-gradient all-reduce is not rows × inner");
    if (rs)
      expect(problem, rs->group == z && rs->bytes == static_cast<double>(inner * cols) * c.e,
             n + ".wgrad.reduce_scatter_z is not the weight block over z");
    expect(problem, (inner * cols) % gz == 0, n + ": the weight block does not split over z");
  }
  problem = agree(problem);
  if (!problem.empty()) {
    out.push_back({"3-D FC " + n, 0, kVerifyTolerance, problem});
    return;
  }
  const int64_t iz = grid.index_in_group(c.rank, z), iy = grid.index_in_group(c.rank, in),
                ix = grid.index_in_group(c.rank, outm);
  const int id = static_cast<int>(std::hash<std::string>{}(n) % 1000) * 10;
  const Mat I = block(id + 1, M, K), W = block(id + 2, K, N), dO = block(id + 3, M, N);
  const Mat O = mul(I, W), dI = mul(dO, transpose(W)), dW = mul(transpose(I), dO);
  // Line 1-2: this rank's shard of W[iy][ix] (1/G_z of the block), all-gathered over z.
  const Mat Wb = sub(W, iy * inner, inner, ix * cols, cols);
  const int64_t chunk = inner * cols / gz;
  Mat Wg(inner, cols);
  if (gz > 1)
    MPI_Allgather(Wb.v.data() + iz * chunk, static_cast<int>(chunk), MPI_DOUBLE, Wg.v.data(), static_cast<int>(chunk),
                  MPI_DOUBLE, c.comm(z));
  else
    Wg = Wb;
  // Lines 3-4: Ô = I[iz][iy] · W, all-reduced over the input axis.
  const Mat Ii = sub(I, iz * rows, rows, iy * inner, inner), dOi = sub(dO, iz * rows, rows, ix * cols, cols);
  Mat Oi = mul(Ii, Wg);
  all_reduce(Oi, c.comm(in));
  // Lines 11-12: the input gradient, all-reduced over the output axis.
  Mat dIi = mul(dOi, transpose(Wg));
  all_reduce(dIi, c.comm(outm));
  // Lines 13-14: the weight gradient, reduce-scattered over z.
  const Mat dWp = mul(transpose(Ii), dOi);
  Mat dWi(1, chunk);
  if (gz > 1)
    MPI_Reduce_scatter_block(dWp.v.data(), dWi.v.data(), static_cast<int>(chunk), MPI_DOUBLE, MPI_SUM, c.comm(z));
  else
    dWi.v = dWp.v;
  const Mat dWb = sub(dW, iy * inner, inner, ix * cols, cols);
  Mat dWwant(1, chunk);
  std::copy(dWb.v.begin() + iz * chunk, dWb.v.begin() + (iz + 1) * chunk, dWwant.v.begin());
  const std::string axes = " (in: " + grid.mask_name(in) + ", out: " + grid.mask_name(outm) + ")";
  out.push_back(
      {"3-D FC " + n + ": output" + axes, compare(Oi, sub(O, iz * rows, rows, ix * cols, cols)), kVerifyTolerance, ""});
  out.push_back({"3-D FC " + n + ": input gradient", compare(dIi, sub(dI, iz * rows, rows, iy * inner, inner)),
                 kVerifyTolerance, ""});
  out.push_back({"3-D FC " + n + ": weight gradient (z shard)", compare(dWi, dWwant), kVerifyTolerance, ""});
}

// The pipeline: every stage applies its own layer to the activation the previous stage sent, and the
// gradient comes back the same way; message sizes as the Program's send ops.
void pipeline(Context& c, std::vector<Check>& out) {
  const auto& grid = c.program.grid;
  const int pipe = grid.axis_index("pipe");
  const int64_t p = grid.axes()[static_cast<size_t>(pipe)].size, s = grid.coord(c.rank, pipe);
  const int64_t h = c.w.model.hidden, T = c.w.training.micro_batch * c.w.model.seq_len;
  std::string problem;
  for (const auto& role : c.program.roles)
    for (const Op& op : role.ops)
      if (op.kind == OpKind::send && problem.empty() && c.w.parallel.tensor.mode == workloads::TensorMode::none)
        expect(problem, op.bytes == static_cast<double>(T * h) * c.e,
               std::string(op.name) + " carries " + std::to_string(op.bytes) + " bytes, not T × hidden");
  problem = agree(problem);
  if (!problem.empty()) {
    out.push_back({"pipeline", 0, kVerifyTolerance, problem});
    return;
  }
  const Mat X = block(50, T, h), dZ = block(51, T, h);
  std::vector<Mat> Ws;
  for (int64_t k = 0; k < p; ++k) Ws.push_back(block(60 + static_cast<int>(k), h, h));
  // Reference: all stages on one rank.
  std::vector<Mat> acts{X};
  for (int64_t k = 0; k < p; ++k) acts.push_back(mul(acts.back(), Ws[static_cast<size_t>(k)]));
  Mat grad = dZ;
  for (int64_t k = p - 1; k >= 0; --k) grad = mul(grad, transpose(Ws[static_cast<size_t>(k)]));
  // Distributed: receive, apply, send on; then the gradient back.
  const int prev = s > 0 ? static_cast<int>(grid.with_coord(c.rank, pipe, s - 1)) : -1;
  const int next = s + 1 < p ? static_cast<int>(grid.with_coord(c.rank, pipe, s + 1)) : -1;
  const int count = static_cast<int>(T * h);
  Mat a = X;
  if (prev >= 0) MPI_Recv(a.v.data(), count, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  Mat y = mul(a, Ws[static_cast<size_t>(s)]);
  if (next >= 0) MPI_Send(y.v.data(), count, MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
  Mat g = dZ;
  if (next >= 0) MPI_Recv(g.v.data(), count, MPI_DOUBLE, next, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  Mat dx = mul(g, transpose(Ws[static_cast<size_t>(s)]));
  if (prev >= 0) MPI_Send(dx.v.data(), count, MPI_DOUBLE, prev, 2, MPI_COMM_WORLD);
  // The last stage holds the output, the first the input gradient; the others compare with themselves.
  const Mat& want_y = next < 0 ? acts.back() : y;
  const Mat& want_dx = prev < 0 ? grad : dx;
  out.push_back({"pipeline: output after " + std::to_string(p) + " stages (send.activation)", compare(y, want_y),
                 kVerifyTolerance, ""});
  out.push_back(
      {"pipeline: input gradient back through every stage (send.grad)", compare(dx, want_dx), kVerifyTolerance, ""});
}

// The tokens `X` (rows) routed to E experts of C slots each (the router's choice drawn from the owner's
// stream; a token over its expert's capacity is dropped): the dispatch buffer, expert by expert, and
// each token's slot in it (-1: dropped).
Mat dispatch_buffer(const Mat& X, int64_t owner, int64_t E, int64_t C, std::vector<int64_t>& slot_of) {
  const int64_t T = X.rows, h = X.cols;
  slot_of.assign(static_cast<size_t>(T), -1);
  std::vector<int64_t> filled(static_cast<size_t>(E), 0);
  Mat D(E * C, h);
  for (int64_t k = 0; k < T; ++k) {
    const auto e =
        static_cast<int64_t>((value(300 + static_cast<int>(owner), k, 0) + 0.5) * static_cast<double>(E)) % E;
    if (filled[static_cast<size_t>(e)] == C) continue;  // over capacity: dropped
    const int64_t slot = e * C + filled[static_cast<size_t>(e)]++;
    slot_of[static_cast<size_t>(k)] = slot;
    for (int64_t j = 0; j < h; ++j) D.at(slot, j) = X.at(k, j);
  }
  return D;
}

// The tokens' results combined back from the slots they were dispatched to (a dropped token's: zero).
Mat combined(const Mat& back, const std::vector<int64_t>& slot_of, int64_t h) {
  Mat got(static_cast<int64_t>(slot_of.size()), h);
  for (size_t k = 0; k < slot_of.size(); ++k) {
    const int64_t slot = slot_of[k];
    if (slot < 0) continue;
    for (int64_t j = 0; j < h; ++j) got.at(static_cast<int64_t>(k), j) = back.at(slot, j);
  }
  return got;
}

// TED's expert exchange ([singh2025dissertation] ch. 7): tokens routed to experts with a capacity, dispatched with an
// all-to-all over the expert group, run through their expert, and combined back with a second one;
// with DTD each tensor rank sends 1/G_tensor of the slots and an all-gather over the tensor group
// reassembles them ([singh2025dissertation] §7.3.1).
void moe_round_trip(Context& c, std::vector<Check>& out) {
  const auto& grid = c.program.grid;
  const auto expert = grid.mask("expert"), tensor = grid.mask("tensor");
  const int64_t p = grid.group_size(expert), t = tensor ? grid.group_size(tensor) : 1;
  const int64_t E = c.w.model.moe.experts, h = c.w.model.hidden;
  const Op* router = find(c.role, "router", Phase::forward);
  const Op* a2a = find(c.role, "dispatch.all_to_all", Phase::forward);
  const Op* fc1 = find(c.role, "expert.fc1", Phase::forward);
  const bool dtd = c.w.opt.duplicate_token_dropping && t > 1;
  std::string problem;
  expect(problem, router && a2a && fc1, "the Program has no router, dispatch.all_to_all and expert.fc1 ops");
  const int64_t T = router ? router->gemm.m : 0;
  const double slots = a2a ? a2a->bytes / (static_cast<double>(h) * c.e) * (dtd ? static_cast<double>(t) : 1.0) : 0;
  const auto C = static_cast<int64_t>(slots) / std::max<int64_t>(E, 1);  // capacity of each expert, per source
  if (problem.empty()) {
    expect(problem, a2a->group == expert, "dispatch.all_to_all does not run over the expert group");
    expect(problem, static_cast<double>(C * E) == slots && C % t == 0,
           "dispatch.all_to_all's " + std::to_string(slots) + " token slots do not split into " + std::to_string(E) +
               " experts" + (dtd ? " and " + std::to_string(t) + " tensor ranks" : ""));
    expect(
        problem, fc1->gemm.batch == E / p && fc1->gemm.m == p * C,
        "expert.fc1 is not " + std::to_string(E / p) + " local experts of " + std::to_string(p * C) + " tokens each");
  }
  problem = agree(problem);
  if (!problem.empty()) {
    out.push_back({"MoE all-to-all round trip", 0, kVerifyTolerance, problem});
    return;
  }
  // Tokens and routing: the same on the ranks of one tensor group (they hold the same tokens).
  const int tensor_axis = grid.axis_index("tensor");
  const int64_t owner = tensor_axis >= 0 ? grid.with_coord(c.rank, tensor_axis, 0) : c.rank;
  const Mat X = block(200 + static_cast<int>(owner), T, h);
  std::vector<int64_t> slot_of;
  const Mat D = dispatch_buffer(X, owner, E, C, slot_of);
  std::vector<Mat> W;
  for (int64_t e = 0; e < E; ++e) W.push_back(block(400 + static_cast<int>(e), h, h));
  const auto apply = [&](Mat rows, int64_t e) { return map(mul(rows, W[static_cast<size_t>(e)]), gelu); };
  // Reference: every token through its expert, here.
  Mat want(T, h);
  for (int64_t k = 0; k < T; ++k) {
    const int64_t slot = slot_of[static_cast<size_t>(k)];
    if (slot < 0) continue;
    const Mat y = apply(sub(D, slot, 1, 0, h), slot / C);
    for (int64_t j = 0; j < h; ++j) want.at(k, j) = y.at(0, j);
  }
  // Distributed. Each destination's block: its E/p experts, the slots this tensor rank sends of each.
  const int64_t local = E / p, me = grid.index_in_group(c.rank, expert);
  const int64_t ti = dtd ? grid.index_in_group(c.rank, tensor) : 0, share = dtd ? C / t : C;
  const int count = static_cast<int>(local * share * h);
  const auto exchange = [&](const Mat& full) {  // full: E·C rows in expert order → received blocks
    Mat send(p * local * share, h), recv(p * local * share, h);
    for (int64_t e = 0; e < E; ++e)
      for (int64_t s2 = 0; s2 < share; ++s2)
        for (int64_t j = 0; j < h; ++j) send.at(e * share + s2, j) = full.at(e * C + ti * share + s2, j);
    MPI_Alltoall(send.v.data(), count, MPI_DOUBLE, recv.v.data(), count, MPI_DOUBLE, c.comm(expert));
    return recv;  // from source q: its slots for expert (me·local + l), at rows (q·local + l)·share + s
  };
  // Reassembles the tensor ranks' shares of the slots (DTD's all-gather); rows: (q·local + l)·C + slot.
  const auto gather_shares = [&](const Mat& mine) {
    Mat all(p * local * C, h);
    Mat got(t * mine.rows, h);
    if (dtd)
      MPI_Allgather(mine.v.data(), static_cast<int>(mine.v.size()), MPI_DOUBLE, got.v.data(),
                    static_cast<int>(mine.v.size()), MPI_DOUBLE, c.comm(tensor));
    else
      got = mine;
    for (int64_t i = 0; i < (dtd ? t : 1); ++i)
      for (int64_t r = 0; r < p * local; ++r)
        for (int64_t s2 = 0; s2 < share; ++s2)
          for (int64_t j = 0; j < h; ++j) all.at(r * C + i * share + s2, j) = got.at(i * mine.rows + r * share + s2, j);
    return all;
  };
  const Mat arrived = gather_shares(exchange(D));
  // Every local expert runs its tokens from every source; the results go back the same way.
  Mat results(p * local * C, h);
  for (int64_t q = 0; q < p; ++q)
    for (int64_t l = 0; l < local; ++l) {
      const Mat y = apply(sub(arrived, (q * local + l) * C, C, 0, h), me * local + l);
      for (int64_t s2 = 0; s2 < C; ++s2)
        for (int64_t j = 0; j < h; ++j) results.at((q * local + l) * C + s2, j) = y.at(s2, j);
    }
  // The way back: rows (q·local + l)·C + slot go to source q, where they are expert (q'·local + l)'s.
  Mat back(E * C, h);  // in source order: destination q's block holds what q sends to its source
  {
    Mat send(p * local * share, h), recv(p * local * share, h);
    for (int64_t q = 0; q < p; ++q)
      for (int64_t l = 0; l < local; ++l)
        for (int64_t s2 = 0; s2 < share; ++s2)
          for (int64_t j = 0; j < h; ++j)
            send.at((q * local + l) * share + s2, j) = results.at((q * local + l) * C + ti * share + s2, j);
    MPI_Alltoall(send.v.data(), count, MPI_DOUBLE, recv.v.data(), count, MPI_DOUBLE, c.comm(expert));
    back = gather_shares(recv);  // rows (q·local + l)·C + slot: expert q·local + l's slot, in expert order
  }
  out.push_back({std::string("MoE all-to-all round trip (dispatch, experts, combine") + (dtd ? ", DTD" : "") + ")",
                 compare(combined(back, slot_of, h), want), kVerifyTolerance, ""});
}

}  // namespace

std::vector<Check> verify(const workloads::Workload& w, const workloads::Program& program, int64_t rank) {
  Context c{w,
            program,
            rank,
            program.roles[static_cast<size_t>(program.role_of(rank))],
            Communicators(program, rank),
            static_cast<double>(workloads::bytes_of(w.training.dtype))};
  std::vector<Check> out;
  const auto& t = w.parallel.tensor;
  if (t.mode == workloads::TensorMode::megatron && t.size > 1 && !w.parallel.sequence_parallel) {
    megatron_attention(c, out);
    megatron_mlp(c, out);
  }
  if (t.mode == workloads::TensorMode::axonn) {
    axonn_fc(c, "qkv", out);
    axonn_fc(c, "proj", out);
  }
  if (w.parallel.pipeline.stages > 1 && w.parallel.pipeline.chunks == 1) pipeline(c, out);
  if (w.model.moe.enabled() && w.parallel.expert > 1) moe_round_trip(c, out);
  return out;
}

}  // namespace paratwin::exec
