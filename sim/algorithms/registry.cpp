// The registered algorithms' table, built from the list in sim/algorithms/registry.hpp.
#include "sim/algorithms/registry.hpp"

#include "sim/collectives.hpp"

namespace paratwin::sim {

const std::vector<AlgorithmSpec>& registered_algorithms() {
#define PARATWIN_ALGORITHM_ENTRY(name) name##_algorithm(),
  static const std::vector<AlgorithmSpec> all = {PARATWIN_COLLECTIVE_ALGORITHMS(PARATWIN_ALGORITHM_ENTRY)};
#undef PARATWIN_ALGORITHM_ENTRY
  return all;
}

const AlgorithmSpec& spec(Algorithm algorithm) {
  return registered_algorithms()[static_cast<size_t>(algorithm)];
}

}  // namespace paratwin::sim
