#pragma once
// The step plans of each collective algorithm, one file each (ring.cpp: rings and NCCL's pipelined
// chains; recursive.cpp: halving and doubling; double_tree.hpp/.cpp: NCCL's double binary tree;
// hierarchical.cpp: PCCL's two levels; pat.cpp: NCCL's PAT; binomial.cpp; pairwise.cpp) and what they share
// (common.cpp). sim::plan (sim/collectives.cpp) picks one by algorithm and kind; default_algorithm is the per-library
// selector.
#include <cstdint>
#include <vector>

#include "sim/collectives.hpp"

namespace paratwin::sim::algorithms {

using Order = std::vector<int32_t>;  // group indices, in the order an algorithm visits them

bool power_of_two(int32_t q);
// The rings, each followed by its reverse when the library runs them both ways
// (GroupLayout::counter_rotating). A ring of two members is its own reverse.
std::vector<Order> with_reverse(std::vector<Order> orders, bool counter_rotating);
int32_t position(const Order& order, int32_t me);
// Transfers to one peer within a step are one flow.
void add(std::vector<Transfer>& transfers, int32_t peer, double bytes);
// Each node's members, in ring order.
std::vector<std::vector<int32_t>> members_by_node(const GroupLayout& layout);
void append(std::vector<Step>& to, std::vector<Step> from);

// Rings run at once, one per channel, each carrying an equal share of every chunk (ring.cpp).
std::vector<Step> rings(const std::vector<Order>& orders, int32_t me, int steps, double chunk, int reducing,
                        Fidelity fidelity);
// NCCL's pipelined broadcast, and reduce the reverse, along the rings from (to) the root (ring.cpp).
std::vector<Step> chain(const std::vector<Order>& orders, int32_t me, int32_t root, double bytes, bool reduce,
                        Fidelity fidelity);
// Recursive halving (reduce-scatter) and doubling (all-gather) over `members` (recursive.cpp).
std::vector<Step> halving(const Order& members, int32_t pos, double input);
std::vector<Step> doubling(const Order& members, int32_t pos, double chunk);
// Halving, doubling or both (Rabenseifner's all-reduce) over a power-of-two group (recursive.cpp).
std::vector<Step> recursive(workloads::OpKind kind, int32_t p, int32_t me, double bytes);
// PCCL's two-level all-gather, reduce-scatter and all-reduce (hierarchical.cpp).
std::vector<Step> hierarchical(workloads::OpKind kind, const GroupLayout& layout, int32_t me, double bytes,
                               Fidelity fidelity);
// NCCL's PAT all-gather and reduce-scatter: log2 p steps of doubling distance (pat.cpp).
std::vector<Step> pat(workloads::OpKind kind, int32_t p, int32_t me, double bytes);
// Binomial-tree broadcast and reduce (binomial.cpp).
std::vector<Step> binomial(int32_t p, int32_t me, int32_t root, double bytes, bool reduce);
// Pairwise all-to-all (pairwise.cpp).
std::vector<Step> pairwise(int32_t p, int32_t me, double bytes, Fidelity fidelity);

}  // namespace paratwin::sim::algorithms
