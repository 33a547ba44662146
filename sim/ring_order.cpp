#include "sim/ring_order.hpp"

#include <algorithm>
#include <numeric>

namespace paratwin::sim {

std::vector<int32_t> fastest_ring(const topology::Topology& topology, const std::vector<int64_t>& devices) {
  const auto m = static_cast<int32_t>(devices.size());
  std::vector<int32_t> perm(static_cast<size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  if (m <= 3 || m > 9) return perm;  // up to three devices every ring is the same
  std::vector<int32_t> best = perm;
  double best_bandwidth = -1;
  int best_links = 0;
  std::vector<int64_t> ring(static_cast<size_t>(m));
  do {
    for (int32_t k = 0; k < m; ++k)
      ring[static_cast<size_t>(k)] = devices[static_cast<size_t>(perm[static_cast<size_t>(k)])];
    const double bandwidth = topology.rings({ring}).bandwidth;
    if (bandwidth < best_bandwidth * (1 - 1e-12)) continue;
    int links = 0;
    for (int32_t k = 0; k < m; ++k)
      links += topology.path(ring[static_cast<size_t>(k)], ring[static_cast<size_t>((k + 1) % m)]).links;
    if (bandwidth > best_bandwidth * (1 + 1e-12) || links < best_links) {
      best_bandwidth = bandwidth;
      best_links = links;
      best = perm;
    }
  } while (std::next_permutation(perm.begin() + 1, perm.end()));
  return best;
}

}  // namespace paratwin::sim
