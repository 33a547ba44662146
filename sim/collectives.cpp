#include "sim/collectives.hpp"

#include <stdexcept>

namespace paratwin::sim {

using workloads::OpKind;

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring:
      return "ring";
    case Algorithm::binomial_tree:
      return "binomial_tree";
    case Algorithm::pairwise:
      return "pairwise";
  }
  return "?";
}

Algorithm default_algorithm(OpKind kind) {
  switch (kind) {
    case OpKind::broadcast:
    case OpKind::reduce:
      return Algorithm::binomial_tree;
    case OpKind::all_to_all:
      return Algorithm::pairwise;
    default:
      return Algorithm::ring;
  }
}

namespace {

// Ring: each step sends one chunk to the next member and receives one from the previous; the first
// `reducing` steps add the received chunk into the member's own (reduce-scatter phases).
std::vector<Step> ring(int32_t p, int32_t me, int steps, double chunk, int reducing, Fidelity fidelity) {
  const int32_t next = (me + 1) % p, prev = (me + p - 1) % p;
  if (fidelity == Fidelity::fast) {
    Step s;
    s.sends.push_back({next, chunk * steps});
    s.recvs.push_back({prev, chunk * steps});
    s.extra_latencies = steps - 1;
    s.reduce_bytes = chunk * reducing;
    return {s};
  }
  std::vector<Step> out(static_cast<size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    out[static_cast<size_t>(k)].sends.push_back({next, chunk});
    out[static_cast<size_t>(k)].recvs.push_back({prev, chunk});
    if (k < reducing) out[static_cast<size_t>(k)].reduce_bytes = chunk;
  }
  return out;
}

// Binomial tree rooted at `root`: in round k, members with relative rank < 2^k send to rel + 2^k.
std::vector<Step> binomial(int32_t p, int32_t me, int32_t root, double bytes, bool reduce) {
  const int32_t rel = (me - root + p) % p;
  std::vector<Step> out;
  for (int32_t span = 1; span < p; span *= 2) {
    Step s;
    if (rel < span && rel + span < p) s.sends.push_back({(rel + span + root) % p, bytes});
    if (rel >= span && rel < 2 * span) s.recvs.push_back({(rel - span + root) % p, bytes});
    out.push_back(s);
  }
  if (reduce) {  // the same tree, leaves first, data flowing to the root
    std::vector<Step> rev(out.rbegin(), out.rend());
    for (auto& s : rev) {
      std::swap(s.sends, s.recvs);
      if (!s.recvs.empty()) s.reduce_bytes = bytes;
    }
    return rev;
  }
  return out;
}

// Pairwise exchange: in step s, send to me + s and receive from me - s.
std::vector<Step> pairwise(int32_t p, int32_t me, double bytes, Fidelity fidelity) {
  const double block = bytes / p;
  std::vector<Step> out;
  if (fidelity == Fidelity::fast) {
    Step s;
    for (int32_t k = 1; k < p; ++k) {
      s.sends.push_back({(me + k) % p, block});
      s.recvs.push_back({(me - k + p) % p, block});
    }
    return {s};
  }
  for (int32_t k = 1; k < p; ++k) {
    Step s;
    s.sends.push_back({(me + k) % p, block});
    s.recvs.push_back({(me - k + p) % p, block});
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<Step> plan(OpKind kind, Algorithm algorithm, int32_t p, int32_t me, double bytes, int32_t root,
                       Fidelity fidelity) {
  if (p <= 1) return {};
  switch (algorithm) {
    case Algorithm::ring:
      switch (kind) {
        case OpKind::all_reduce:
          return ring(p, me, 2 * (p - 1), bytes / p, p - 1, fidelity);
        case OpKind::reduce_scatter:
          return ring(p, me, p - 1, bytes / p, p - 1, fidelity);
        case OpKind::all_gather:
          return ring(p, me, p - 1, bytes / p, 0, fidelity);
        default:
          break;
      }
      break;
    case Algorithm::binomial_tree:
      if (kind == OpKind::broadcast || kind == OpKind::reduce)
        return binomial(p, me, root < 0 ? 0 : root, bytes, kind == OpKind::reduce);
      break;
    case Algorithm::pairwise:
      if (kind == OpKind::all_to_all) return pairwise(p, me, bytes, fidelity);
      break;
  }
  throw std::invalid_argument(std::string("no ") + to_string(algorithm) + " algorithm for " +
                              workloads::to_string(kind));
}

}  // namespace paratwin::sim
