// AxoNN's 3-D tensor parallelism ([singh2025dissertation] Algorithm 3, §5.1.1): every FC layer all-gathers its
// weight shard over z, multiplies, and all-reduces the output over y; backward all-reduces the input
// gradient over x and reduce-scatters the weight gradient over z. Every other FC layer is
// "transposed": the roles of x and y swap (QKV and fc1 normal, projection and fc2 transposed).
#include "workloads/lower_internal.hpp"

namespace paratwin::workloads::detail {

namespace {

struct Fc {
  const char* name;
  const char* gather;
  const char* out_reduce;
  const char* dgrad;
  const char* dgrad_reduce;
  const char* wgrad;
  const char* grad_scatter;
  int64_t k, n;
  bool transposed;
};

class AxonnLowering final : public LayerLowering {
 public:
  explicit AxonnLowering(const Ctx& c)
      : c_(c),
        h_(c.w.model.hidden),
        a_(c.w.model.heads),
        S_(c.w.model.seq_len),
        V_(c.w.model.vocab),
        gx_(c.size(c.x)),
        gy_(c.size(c.y)),
        gz_(c.size(c.z)),
        m_(c.w.training.micro_batch * c.w.model.seq_len) {
    const int64_t f = c.w.model.ffn_hidden;
    fcs_ = {{"qkv", "qkv.all_gather_z", "qkv.all_reduce_y", "qkv.dgrad", "qkv.dgrad.all_reduce_x", "qkv.wgrad",
             "qkv.wgrad.reduce_scatter_z", h_, 3 * h_, false},
            {"proj", "proj.all_gather_z", "proj.all_reduce_y", "proj.dgrad", "proj.dgrad.all_reduce_x", "proj.wgrad",
             "proj.wgrad.reduce_scatter_z", h_, h_, true},
            {"fc1", "fc1.all_gather_z", "fc1.all_reduce_y", "fc1.dgrad", "fc1.dgrad.all_reduce_x", "fc1.wgrad",
             "fc1.wgrad.reduce_scatter_z", h_, f, false},
            {"fc2", "fc2.all_gather_z", "fc2.all_reduce_y", "fc2.dgrad", "fc2.dgrad.all_reduce_x", "fc2.wgrad",
             "fc2.wgrad.reduce_scatter_z", f, h_, true}};
    logits_ = {"logits",
               "logits.all_gather_z",
               "logits.all_reduce_y",
               "logits.dgrad",
               "logits.dgrad.all_reduce_x",
               "logits.wgrad",
               "logits.wgrad.reduce_scatter_z",
               h_,
               V_,
               false};
  }

  void forward(Emitter& e, int32_t layer) override {
    const bool gather = !(e.phase == Phase::recompute && c_.w.opt.cache_all_gather);
    e.elementwise("ln1", 2 * rows() * c_.e, 5 * rows());
    fc_forward(e, layer, 0, gather);
    // Heads are split over x (QKV's output axis) and tokens over z; the y ranks repeat the work.
    attention_core(e, m_ / gz_, a_ / gx_, h_ / a_, S_);
    fc_forward(e, layer, 1, gather);
    e.elementwise("dropout_residual1", 3 * rows() * c_.e, 2 * rows());
    e.elementwise("ln2", 2 * rows() * c_.e, 5 * rows());
    fc_forward(e, layer, 2, gather);
    const double act = static_cast<double>(m_ / gz_) * static_cast<double>(c_.w.model.ffn_hidden / gx_);
    e.elementwise("gelu", 2 * act * c_.e, 8 * act);
    fc_forward(e, layer, 3, gather);
    e.elementwise("dropout_residual2", 3 * rows() * c_.e, 2 * rows());
  }

  void backward(Emitter& e, int32_t layer) override {
    (void)layer;
    e.elementwise("dropout_residual2.bwd", 3 * rows() * c_.e, 2 * rows());
    fc_backward(e, fcs_[3]);
    const double act = static_cast<double>(m_ / gz_) * static_cast<double>(c_.w.model.ffn_hidden / gx_);
    e.elementwise("gelu.bwd", 3 * act * c_.e, 10 * act);
    fc_backward(e, fcs_[2]);
    e.elementwise("ln2.bwd", 3 * rows() * c_.e, 8 * rows());
    e.elementwise("dropout_residual1.bwd", 3 * rows() * c_.e, 2 * rows());
    fc_backward(e, fcs_[1]);
    attention_core_backward(e, m_ / gz_, a_ / gx_, h_ / a_, S_);
    fc_backward(e, fcs_[0]);
    e.elementwise("ln1.bwd", 3 * rows() * c_.e, 8 * rows());
  }

  void recompute_attention(Emitter& e, int32_t layer) override {
    (void)layer;
    attention_core(e, m_ / gz_, a_ / gx_, h_ / a_, S_);
  }

  void embedding_forward(Emitter& e) override { e.elementwise("embedding", 2 * rows() * c_.e, rows()); }
  void embedding_backward(Emitter& e) override { e.elementwise("embedding.bwd", 2 * rows() * c_.e, rows()); }

  void logits_forward(Emitter& e) override {
    if (gz_ > 1) e.blocking(OpKind::all_gather, Stream::shard, c_.z, weight_bytes(logits_), logits_.gather);
    fc_compute_forward(e, logits_);
    const double out = static_cast<double>(m_ / gz_) * static_cast<double>(V_ / gx_);
    e.elementwise("cross_entropy", 2 * out * 4.0, 5 * out);
  }

  void logits_backward(Emitter& e) override {
    const double out = static_cast<double>(m_ / gz_) * static_cast<double>(V_ / gx_);
    e.elementwise("cross_entropy.bwd", 2 * out * c_.e, 2 * out);
    fc_backward(e, logits_);
  }

  double activation_message_bytes() const override { return rows() * c_.e; }

  std::vector<ParamBlock> layer_params(int32_t layer) const override {
    (void)layer;
    const double g = static_cast<double>(gx_ * gy_ * gz_);
    std::vector<ParamBlock> blocks;
    for (const auto& fc : fcs_) blocks.push_back({fc.name, static_cast<double>(fc.k * fc.n) / g, false});
    // Biases and layer norms are small and kept whole on every rank.
    const double h = static_cast<double>(h_), f = static_cast<double>(c_.w.model.ffn_hidden);
    blocks.push_back({"biases_norms", 3 * h + h + f + h + 4 * h, false});
    return blocks;
  }

  double logits_bytes() const override { return 4.0 * static_cast<double>(m_ / gz_) * static_cast<double>(V_ / gx_); }
  // Algorithm 3 line 5 caches W for the backward pass; with checkpointing the recompute gathers it
  // again unless the forward's copy is cached across the recompute pass.
  bool keeps_gathered_weights() const override {
    return gz_ > 1 && (c_.w.opt.cache_all_gather || c_.w.training.checkpointing == Checkpointing::none);
  }

  double embedding_params() const override {
    return static_cast<double>(V_ * h_) / static_cast<double>(gx_ * gy_ * gz_);
  }
  double position_params() const override {
    if (c_.w.model.position != Position::learned) return 0.0;
    return static_cast<double>(S_ * h_) / static_cast<double>(gx_ * gy_ * gz_);
  }

  double gathered_weight_bytes(int32_t layer) const override {
    (void)layer;
    if (gz_ <= 1) return 0;
    double bytes = 0;
    for (const auto& fc : fcs_) bytes += static_cast<double>(fc.k * fc.n) / static_cast<double>(gx_ * gy_) * c_.e;
    return bytes;
  }

 protected:
  GatherSpec gather_spec(int32_t layer, int32_t block) const override {
    (void)layer;
    return {c_.z, weight_bytes(fcs_[block]), fcs_[block].gather};
  }
  int32_t gather_blocks(int32_t layer) const override {
    (void)layer;
    return static_cast<int32_t>(fcs_.size());
  }

 private:
  double rows() const { return static_cast<double>(m_ / gz_) * static_cast<double>(h_ / gy_); }
  // The gathered weight block W_{j,i}: k/G_y × n/G_x (G_x and G_y swapped when transposed).
  double weight_bytes(const Fc& fc) const {
    return static_cast<double>(fc.k * fc.n) / static_cast<double>(gx_ * gy_) * c_.e;
  }
  int64_t out_split(const Fc& fc) const { return fc.transposed ? gy_ : gx_; }
  int64_t in_split(const Fc& fc) const { return fc.transposed ? gx_ : gy_; }
  AxisMask out_axis(const Fc& fc) const { return fc.transposed ? c_.y : c_.x; }
  AxisMask in_axis(const Fc& fc) const { return fc.transposed ? c_.x : c_.y; }

  void fc_forward(Emitter& e, int32_t layer, int32_t block, bool gather) {
    if (gather && gz_ > 1) gather_weights(e, layer, block, c_.w.opt.overlap_all_gather ? 1 : 0);
    fc_compute_forward(e, fcs_[block]);
  }

  // Lines 3-4: Ô = I × W, then O = all-reduce over the axis that splits k (y; x when transposed).
  void fc_compute_forward(Emitter& e, const Fc& fc) {
    const int64_t rows = m_ / gz_, cols = fc.n / out_split(fc), inner = fc.k / in_split(fc);
    e.gemm(fc.name, rows, cols, inner);
    e.blocking(OpKind::all_reduce, Stream::tensor, in_axis(fc), static_cast<double>(rows * cols) * c_.e, fc.out_reduce);
  }

  // Lines 11-14, with OAR (the input-gradient all-reduce overlaps the weight-gradient GEMM) and ORS
  // (the weight-gradient reduce-scatter is waited for only before the data-parallel reduction).
  void fc_backward(Emitter& e, const Fc& fc) {
    const int64_t rows = m_ / gz_, cols = fc.n / out_split(fc), inner = fc.k / in_split(fc);
    e.gemm(fc.dgrad, rows, inner, cols, 1, false, true);
    const double dgrad_bytes = static_cast<double>(rows * inner) * c_.e;
    uint32_t ar = kNoOp;
    if (c_.w.opt.overlap_all_reduce)
      ar = e.async(OpKind::all_reduce, Stream::tensor, out_axis(fc), dgrad_bytes, fc.dgrad_reduce, {e.last_compute()});
    else
      e.blocking(OpKind::all_reduce, Stream::tensor, out_axis(fc), dgrad_bytes, fc.dgrad_reduce);
    e.gemm(fc.wgrad, inner, cols, rows, 1, true, false);
    const double grad_bytes = static_cast<double>(fc.k * fc.n) / static_cast<double>(gx_ * gy_) * c_.e;
    if (c_.w.opt.overlap_reduce_scatter) {
      const uint32_t rs =
          e.async(OpKind::reduce_scatter, Stream::shard, c_.z, grad_bytes, fc.grad_scatter, {e.last_compute()});
      if (rs != kNoOp) e.deferred.push_back(rs);
    } else {
      e.blocking(OpKind::reduce_scatter, Stream::shard, c_.z, grad_bytes, fc.grad_scatter);
    }
    e.wait(ar);
  }

  const Ctx& c_;
  int64_t h_, a_, S_, V_, gx_, gy_, gz_, m_;
  std::vector<Fc> fcs_;
  Fc logits_;
};

}  // namespace

std::unique_ptr<LayerLowering> make_axonn_lowering(const Ctx& c) {
  return std::make_unique<AxonnLowering>(c);
}

}  // namespace paratwin::workloads::detail
