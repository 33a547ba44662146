#include "workloads/gradient_buckets.hpp"

#include <algorithm>
#include <cmath>

namespace paratwin::workloads::detail {

std::vector<GradientBucket> gradient_buckets(const std::vector<GradientBlock>& blocks, double bucket_bytes) {
  std::vector<GradientBucket> out;
  if (bucket_bytes <= 0) {
    for (const auto& b : blocks) out.push_back({b.layer, b.name, b.bytes, b.expert});
    return out;
  }
  // The last block of each group: its remainder is reduced when that block's gradients are ready.
  size_t last[2] = {blocks.size(), blocks.size()};
  for (size_t i = 0; i < blocks.size(); ++i) last[blocks[i].expert ? 1 : 0] = i;
  double filled[2] = {0, 0};
  int held[2] = {0, 0};  // blocks with gradients in the open bucket
  const double slack = std::isfinite(bucket_bytes) ? 1e-9 * bucket_bytes : 0;  // rounding of the cuts
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    const int g = b.expert ? 1 : 0;
    filled[g] += b.bytes;
    ++held[g];
    while (filled[g] >= bucket_bytes - slack) {
      out.push_back({b.layer, held[g] == 1 ? b.name : "grad.bucket", bucket_bytes, b.expert});
      filled[g] = std::max(0.0, filled[g] - bucket_bytes);
      held[g] = filled[g] > slack ? 1 : 0;  // the rest of this block starts the next bucket
    }
    if (i == last[g] && filled[g] > slack) {
      out.push_back({b.layer, held[g] == 1 ? b.name : "grad.bucket", filled[g], b.expert});
      filled[g] = 0;
      held[g] = 0;
    }
  }
  return out;
}

}  // namespace paratwin::workloads::detail
