#include "sim/algorithms/double_tree.hpp"

namespace paratwin::sim::algorithms {

TreeLinks btree(int32_t n, int32_t r) {
  TreeLinks t;
  int32_t bit = 1;
  while (bit < n && !(bit & r)) bit <<= 1;
  if (r == 0) {
    if (n > 1) t.children[1] = bit >> 1;
    return t;
  }
  t.parent = (r ^ bit) | (bit << 1);
  if (t.parent >= n) t.parent = r ^ bit;
  int32_t low = bit >> 1;
  if (low == 0) return t;
  t.children[0] = r - low;
  while (low > 0 && r + low >= n) low >>= 1;
  if (low > 0) t.children[1] = r + low;
  return t;
}

}  // namespace paratwin::sim::algorithms
