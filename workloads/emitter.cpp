#include "workloads/lower_internal.hpp"

namespace paratwin::workloads::detail {

Ctx::Ctx(const Workload& wl, const Grid& g) : w(wl), grid(g) {
  e = bytes_of(w.training.dtype);
  tokens = static_cast<double>(w.tokens_per_rank());
  tensor = g.mask("tensor");
  x = g.mask("x");
  y = g.mask("y");
  z = g.mask("z");
  col = g.mask("col");
  row = g.mask("row");
  expert = g.mask("expert");
  context = g.mask("context");
  pipe = g.mask("pipe");
  replica = g.mask("replica");
  data = g.mask("data") | replica;
  // Context ranks hold the same weights: their gradients are reduced with the data-parallel group's
  // (Megatron-Core's data-parallel group with context parallelism).
  dp_dense = data | expert | context;
  dp_expert = data | context;
  expert_group = w.parallel.experts_folded() ? expert | tensor : expert;
  shard_dense = dp_dense & ~replica;
  shard_expert = dp_expert & ~replica;
}

Op Emitter::labelled(OpKind kind, Stream s, const char* name) const {
  Op op;
  op.kind = kind;
  op.stream = s;
  op.phase = phase;
  op.dtype = ctx_.w.training.dtype;
  op.layer = layer;
  op.micro_batch = micro_batch;
  op.chunk = chunk;
  op.name = name;
  return op;
}

uint32_t Emitter::add(Op op, const std::vector<uint32_t>& deps) {
  op.dep_begin = static_cast<uint32_t>(role_.deps.size());
  for (uint32_t d : deps)
    if (d != kNoOp) role_.deps.push_back(d);
  op.dep_count = static_cast<uint32_t>(role_.deps.size()) - op.dep_begin;
  role_.ops.push_back(op);
  return static_cast<uint32_t>(role_.ops.size() - 1);
}

uint32_t Emitter::compute(OpKind kind, const char* name, double bytes, double flops, Stream s) {
  Op op = labelled(kind, s, name);
  op.bytes = bytes;
  op.flops = flops;
  const uint32_t id = add(op, pending_);
  pending_.clear();
  if (s == Stream::compute) last_compute_ = id;
  return id;
}

// FSDP HYBRID_SHARD reduces each gradient shard across the replicas once its reduce-scatter is done,
// on a stream and a communicator of its own, so the next gathers do not queue behind it
// (torch/distributed/fsdp/_runtime_utils.py _reduce_grad: reduce_scatter on the shard process group,
// then all_reduce on _inter_node_pg in _all_reduce_stream, v2.1).
uint32_t Emitter::replicate(AxisMask group, double bytes, uint32_t reduce_scatter) {
  if (!ctx_.replica || reduce_scatter == kNoOp) return reduce_scatter;
  return async(OpKind::all_reduce, Stream::data, ctx_.replica, bytes / static_cast<double>(ctx_.size(group)),
               "zero3.replica.all_reduce", {reduce_scatter});
}

uint32_t Emitter::host_work(const char* name, double seconds, Stream s, std::vector<uint32_t> deps) {
  if (seconds <= 0) return kNoOp;
  Op op = labelled(OpKind::elementwise, s, name);
  op.host_seconds = seconds;
  if (s == Stream::compute) {
    deps.insert(deps.end(), pending_.begin(), pending_.end());
    pending_.clear();
  }
  const uint32_t id = add(op, deps);
  if (s == Stream::compute) last_compute_ = id;
  return id;
}

uint32_t Emitter::gemm(const char* name, int64_t m, int64_t n, int64_t k, int64_t batch, bool ta, bool tb) {
  return gemm_in(ctx_.w.training.dtype, name, m, n, k, batch, ta, tb);
}

uint32_t Emitter::gemm_in(Dtype dtype, const char* name, int64_t m, int64_t n, int64_t k, int64_t batch, bool ta,
                          bool tb) {
  Op op = labelled(OpKind::gemm, Stream::compute, name);
  op.dtype = dtype;
  op.gemm = {m, n, k, batch, ta, tb};
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double B = static_cast<double>(batch);
  op.flops = 2.0 * M * N * K * B;
  op.bytes = (bytes_of(dtype) * (M * K + K * N) + ctx_.e * M * N) * B;
  const uint32_t id = add(op, pending_);
  pending_.clear();
  last_compute_ = id;
  return id;
}

uint32_t Emitter::elementwise(const char* name, double bytes, double flops) {
  return compute(OpKind::elementwise, name, bytes, flops);
}

uint32_t Emitter::blocking(OpKind kind, Stream s, AxisMask group, double bytes, const char* name, int32_t root) {
  // Its input is the last computation's output, or the output of collectives still pending.
  std::vector<uint32_t> deps = pending_;
  deps.push_back(last_compute_);
  const uint32_t id = async(kind, s, group, bytes, name, std::move(deps), root);
  wait(id);
  return id;
}

uint32_t Emitter::async(OpKind kind, Stream s, AxisMask group, double bytes, const char* name,
                        std::vector<uint32_t> deps, int32_t root) {
  if (ctx_.size(group) <= 1) return kNoOp;
  Op op = labelled(kind, s, name);
  op.group = group;
  op.bytes = bytes;
  op.root = root;
  return add(op, deps);
}

namespace {
// Keys a causal FlashAttention kernel visits per query on average: the tiles above the diagonal are
// skipped (FlashAttention-2 §3.1, "causal masking"), about half of them.
int64_t causal_keys(int64_t seq) {
  return (seq + 1) / 2;
}
}  // namespace

void attention_core(Emitter& e, int64_t rows, int64_t heads, int64_t d, int64_t seq) {
  if (e.ctx().w.model.attention == Attention::flash) {
    // S = Q·Kᵀ and O = P·V for the visited tiles: two products of rows × d over the causal keys,
    // timed as one batched GEMM of that shape (the kernel's inner loop runs over the keys).
    e.gemm("attn.flash", rows, d, causal_keys(seq), 2 * heads);
    return;
  }
  e.gemm("attn.score", rows, seq, d, heads, false, true);
  const double scores = static_cast<double>(heads * rows * seq);
  // PyTorch's math path adds the causal mask in place (attn.add_(mask)): read and write every score.
  if (e.ctx().w.model.attention == Attention::math) e.elementwise("attn.mask", 2 * scores * e.ctx().e, scores);
  e.elementwise("attn.softmax", 3 * scores * e.ctx().e, 5 * scores);
  // Read the probabilities, write them dropped out and the mask.
  if (e.ctx().w.model.attention_dropout > 0) e.elementwise("attn.dropout", scores * (2 * e.ctx().e + 1), 2 * scores);
  e.gemm("attn.context", rows, d, seq, heads);
}

void attention_core_backward(Emitter& e, int64_t rows, int64_t heads, int64_t d, int64_t seq) {
  if (e.ctx().w.model.attention == Attention::flash) {
    // FlashAttention-2's backward (its Algorithm 2): S = Q·Kᵀ again, dV = Pᵀ·dO, dP = dO·Vᵀ,
    // dQ = dS·K, dK = dSᵀ·Q: five products of the forward's shape.
    e.gemm("attn.flash.bwd", rows, d, causal_keys(seq), 5 * heads);
    return;
  }
  e.gemm("attn.context.dgrad", rows, seq, d, heads, false, true);
  e.gemm("attn.context.wgrad", seq, d, rows, heads, true, false);
  const double scores = static_cast<double>(heads * rows * seq);
  // Read the gradient and the mask, write the gradient of the probabilities.
  if (e.ctx().w.model.attention_dropout > 0) e.elementwise("attn.dropout.bwd", scores * (2 * e.ctx().e + 1), scores);
  e.elementwise("attn.softmax.bwd", 3 * scores * e.ctx().e, 4 * scores);
  e.gemm("attn.score.dgrad", rows, d, seq, heads);
  e.gemm("attn.score.wgrad", seq, d, rows, heads, true, false);
}

void LayerLowering::gather_weights(Emitter& e, int32_t layer, int32_t block, int ahead) {
  auto issue = [&](int32_t l, int32_t b) {
    const GatherSpec g = gather_spec(l, b);
    std::vector<uint32_t> deps{e.last_compute()};
    if (gather_host_.seconds > 0 || gather_host_.synchronize) {
      // The call leaves the host after the stack's host work; a synchronising stack's host first
      // waits for everything queued on the device, so that work sits on the compute stream.
      const Stream s = gather_host_.synchronize ? Stream::compute : Stream::shard;
      const uint32_t host = e.host_work("zero3.gather.host", gather_host_.seconds, s, deps);
      if (host != kNoOp) deps = {host};
    }
    const uint32_t id = e.async(OpKind::all_gather, Stream::shard, g.group, g.bytes, g.name, std::move(deps));
    if (id != kNoOp) e.role().ops[id].layer = l;  // the layer it gathers, issued ahead or not
    prefetched_.push_back({{l, b}, id});
    return id;
  };
  auto find = [&](int32_t l, int32_t b) -> const uint32_t* {
    for (const auto& [key, id] : prefetched_)
      if (key.first == l && key.second == b) return &id;
    return nullptr;
  };
  // The call after (l, b) in this pass: blocks in forward order, reversed in a backward pass.
  const int32_t dir = e.phase == Phase::backward ? -1 : 1;
  auto next = [&](int32_t& l, int32_t& b) {
    b += dir;
    while (b < 0 || b >= gather_blocks(l)) {  // into the next layer of the pass with a gather
      l += pass_step_;
      if (pass_step_ > 0 ? l > pass_to_ : l < pass_to_) return false;
      b = dir > 0 ? 0 : gather_blocks(l) - 1;
    }
    return true;
  };
  const auto copy_out = [&] {
    const GatherSpec g = gather_spec(layer, block);
    if (gather_host_.copy_out && g.copied) e.elementwise("zero3.copy_out", 2 * g.bytes, 0);
  };
  if (ahead <= 0) {
    e.wait(issue(layer, block));
    copy_out();
    return;
  }
  const uint32_t* mine = find(layer, block);
  const uint32_t id = mine ? *mine : issue(layer, block);
  int32_t l = layer, b = block;
  for (int k = 0; k < ahead && next(l, b); ++k)
    if (!find(l, b)) issue(l, b);
  e.wait(id);
  copy_out();
}

}  // namespace paratwin::workloads::detail
