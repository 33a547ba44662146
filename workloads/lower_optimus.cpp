// Optimus 2-D tensor parallelism ([xu2021optimus] §2.4, Algorithms 1-3): SUMMA over a q × q mesh. An FC
// layer's forward broadcasts a column block of the input along each mesh row and a row block of the
// weight along each mesh column, q times; backward broadcasts and reduces the same way.
// The group over axis "col" is a mesh row (ranks that differ in column), "row" a mesh column.
#include "workloads/lower_internal.hpp"

namespace paratwin::workloads::detail {

namespace {

struct Summa {
  const char* name;
  int64_t k, n;
};

class OptimusLowering final : public LayerLowering {
 public:
  explicit OptimusLowering(const Ctx& c)
      : c_(c),
        h_(c.w.model.hidden),
        f_(c.w.model.ffn_hidden),
        a_(c.w.model.heads),
        S_(c.w.model.seq_len),
        V_(c.w.model.vocab),
        q_(c.size(c.col)),
        T_(c.w.training.micro_batch * c.w.model.seq_len) {}

  void forward(Emitter& e, int32_t layer) override {
    (void)layer;
    e.elementwise("ln1", 2 * rows() * c_.e, 5 * rows());
    summa_forward(e, {"qkv", h_, 3 * h_});
    attention_core(e, T_ / q_, a_ / q_, h_ / a_, S_);
    summa_forward(e, {"proj", h_, h_});
    e.elementwise("dropout_residual1", 3 * rows() * c_.e, 2 * rows());
    e.elementwise("ln2", 2 * rows() * c_.e, 5 * rows());
    summa_forward(e, {"fc1", h_, f_});
    const double act = static_cast<double>((T_ / q_) * (f_ / q_));
    e.elementwise("gelu", 2 * act * c_.e, 8 * act);
    summa_forward(e, {"fc2", f_, h_});
    e.elementwise("dropout_residual2", 3 * rows() * c_.e, 2 * rows());
  }

  void backward(Emitter& e, int32_t layer) override {
    (void)layer;
    e.elementwise("dropout_residual2.bwd", 3 * rows() * c_.e, 2 * rows());
    summa_backward(e, {"fc2", f_, h_});
    const double act = static_cast<double>((T_ / q_) * (f_ / q_));
    e.elementwise("gelu.bwd", 3 * act * c_.e, 10 * act);
    summa_backward(e, {"fc1", h_, f_});
    e.elementwise("ln2.bwd", 3 * rows() * c_.e, 8 * rows());
    e.elementwise("dropout_residual1.bwd", 3 * rows() * c_.e, 2 * rows());
    summa_backward(e, {"proj", h_, h_});
    attention_core_backward(e, T_ / q_, a_ / q_, h_ / a_, S_);
    summa_backward(e, {"qkv", h_, 3 * h_});
    e.elementwise("ln1.bwd", 3 * rows() * c_.e, 8 * rows());
  }

  void recompute_attention(Emitter& e, int32_t layer) override {
    (void)layer;
    attention_core(e, T_ / q_, a_ / q_, h_ / a_, S_);
  }

  void embedding_forward(Emitter& e) override { e.elementwise("embedding", 2 * rows() * c_.e, rows()); }
  void embedding_backward(Emitter& e) override { e.elementwise("embedding.bwd", 2 * rows() * c_.e, rows()); }

  void logits_forward(Emitter& e) override {
    summa_forward(e, {"logits", h_, V_});
    const double out = static_cast<double>((T_ / q_) * (V_ / q_));
    e.elementwise("cross_entropy", 2 * out * 4.0, 5 * out);
  }

  void logits_backward(Emitter& e) override {
    const double out = static_cast<double>((T_ / q_) * (V_ / q_));
    e.elementwise("cross_entropy.bwd", 2 * out * c_.e, 2 * out);
    summa_backward(e, {"logits", h_, V_});
  }

  double activation_message_bytes() const override { return rows() * c_.e; }

  std::vector<ParamBlock> layer_params(int32_t layer) const override {
    (void)layer;
    const double h = static_cast<double>(h_), f = static_cast<double>(f_), q2 = static_cast<double>(q_ * q_);
    // Weights are q × q blocks; biases and layer norms live on one mesh row ([xu2021optimus] Fig. 5) and
    // are counted here as if spread evenly.
    return {{"layer", (4 * h * h + 2 * h * f + 9 * h + f) / q2, false}};
  }
  double logits_bytes() const override { return 4.0 * static_cast<double>((T_ / q_) * (V_ / q_)); }
  double embedding_params() const override { return static_cast<double>(V_ * h_) / static_cast<double>(q_ * q_); }
  double position_params() const override {
    if (c_.w.model.position != Position::learned) return 0.0;
    return static_cast<double>(S_ * h_) / static_cast<double>(q_ * q_);
  }
  double gathered_weight_bytes(int32_t layer) const override {
    (void)layer;
    return 0;
  }

 protected:
  GatherSpec gather_spec(int32_t, int32_t) const override { return {0, 0, ""}; }
  int32_t gather_blocks(int32_t) const override { return 0; }

 private:
  double rows() const { return static_cast<double>(T_ / q_) * static_cast<double>(h_ / q_); }

  // C = A·B as q outer products: step i broadcasts A's column block i along every mesh row and B's
  // row block i along every mesh column ([xu2021optimus] Algorithm 1).
  void summa_forward(Emitter& e, const Summa& fc) {
    const int64_t rows = T_ / q_, inner = fc.k / q_, cols = fc.n / q_;
    for (int32_t i = 0; i < q_; ++i) {
      e.blocking(OpKind::broadcast, Stream::tensor, c_.col, static_cast<double>(rows * inner) * c_.e,
                 "summa.bcast_input", i);
      e.blocking(OpKind::broadcast, Stream::tensor, c_.row, static_cast<double>(inner * cols) * c_.e,
                 "summa.bcast_weight", i);
      e.gemm(fc.name, rows, cols, inner);
    }
  }

  // dA = dC·Bᵀ: broadcast B's row block i down the columns, multiply, reduce along the rows to
  // column i; dB = Aᵀ·dC: broadcast A's column block i along the rows, multiply, reduce down the
  // columns to row i ([xu2021optimus] Algorithms 2-3).
  void summa_backward(Emitter& e, const Summa& fc) {
    const int64_t rows = T_ / q_, inner = fc.k / q_, cols = fc.n / q_;
    for (int32_t i = 0; i < q_; ++i) {
      e.blocking(OpKind::broadcast, Stream::tensor, c_.row, static_cast<double>(inner * cols) * c_.e,
                 "summa.bcast_weight", i);
      e.gemm("summa.dgrad", rows, inner, cols, 1, false, true);
      e.blocking(OpKind::reduce, Stream::tensor, c_.col, static_cast<double>(rows * inner) * c_.e, "summa.reduce_dgrad",
                 i);
    }
    for (int32_t i = 0; i < q_; ++i) {
      e.blocking(OpKind::broadcast, Stream::tensor, c_.col, static_cast<double>(rows * inner) * c_.e,
                 "summa.bcast_input", i);
      e.gemm("summa.wgrad", inner, cols, rows, 1, true, false);
      e.blocking(OpKind::reduce, Stream::tensor, c_.row, static_cast<double>(inner * cols) * c_.e, "summa.reduce_wgrad",
                 i);
    }
  }

  const Ctx& c_;
  int64_t h_, f_, a_, S_, V_, q_, T_;
};

}  // namespace

std::unique_ptr<LayerLowering> make_optimus_lowering(const Ctx& c) {
  return std::make_unique<OptimusLowering>(c);
}

}  // namespace paratwin::workloads::detail
