#pragma once
// A structure-aware mutation of JSON text for libFuzzer's custom mutator hook, shared by the machine and
// sweep-spec targets. Byte-level mutations of JSON mostly give syntax errors that the parser rejects
// on the first bad byte, so half of the time this parses the input and changes one place of the tree:
// a value replaced by one of the same kind near it or by one from the format's vocabulary (key names,
// enum strings, endpoint names, interesting numbers), a member added or removed, an array element
// removed or duplicated, a subtree copied over another. That reaches the cross-field rules behind the
// syntax. The other half, and any input that is not JSON, goes to libFuzzer's own mutations.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace paratwin::fuzz {

// What a format's documents are made of, for values that the rules read.
struct Vocabulary {
  std::vector<std::string> keys;     // member names of every level of the format
  std::vector<std::string> strings;  // enum values, names that must match each other, paths
  std::vector<int64_t> integers;     // limits and their neighbours, divisors
  std::vector<double> numbers;       // rates, fractions, out-of-range values
};

namespace detail {

template <typename T>
const T& pick(std::minstd_rand& rng, const std::vector<T>& items) {
  return items[rng() % items.size()];
}

// Every place of the tree, as JSON pointers, the root included.
inline void places(const nlohmann::json& v, const nlohmann::json::json_pointer& at,
                   std::vector<nlohmann::json::json_pointer>& out) {
  out.push_back(at);
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) places(it.value(), at / it.key(), out);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) places(v[i], at / i, out);
  }
}

inline nlohmann::json integer_near(std::minstd_rand& rng, const Vocabulary& vocab, const nlohmann::json& old) {
  if (old.is_number_integer() && rng() % 2 == 0) {
    const int64_t v = old.get<int64_t>();
    switch (rng() % 5) {
      case 0:
        return v / 2;
      case 1:
        return v < INT64_MAX / 2 && v > INT64_MIN / 2 ? v * 2 : v;
      case 2:
        return v < INT64_MAX ? v + 1 : v;
      case 3:
        return v > INT64_MIN ? v - 1 : v;
      default:
        return v > INT64_MIN ? -v : v;
    }
  }
  return pick(rng, vocab.integers);
}

// A value of any kind, mostly from the vocabulary.
inline nlohmann::json any_value(std::minstd_rand& rng, const Vocabulary& vocab, const nlohmann::json& old) {
  switch (rng() % 7) {
    case 0:
    case 1:
      return integer_near(rng, vocab, old);
    case 2:
      return pick(rng, vocab.numbers);
    case 3:
    case 4:
      return pick(rng, vocab.strings);
    case 5:
      return rng() % 2 == 0;
    default:
      return rng() % 2 ? nlohmann::json::array({pick(rng, vocab.strings)}) : nlohmann::json::object();
  }
}

// A value of the same kind as `old`, near it or from the vocabulary; sometimes of another kind.
inline nlohmann::json replacement(std::minstd_rand& rng, const Vocabulary& vocab, const nlohmann::json& old) {
  if (rng() % 8 == 0) return any_value(rng, vocab, old);
  if (old.is_number_integer()) return integer_near(rng, vocab, old);
  if (old.is_number_float()) {
    const double v = old.get<double>();
    switch (rng() % 4) {
      case 0:
        return v * 2;
      case 1:
        return v / 3;
      case 2:
        return -v;
      default:
        return pick(rng, vocab.numbers);
    }
  }
  if (old.is_string()) return pick(rng, vocab.strings);
  if (old.is_boolean()) return !old.get<bool>();
  return any_value(rng, vocab, old);
}

// Changes one place of `doc`.
inline void mutate_once(nlohmann::json& doc, std::minstd_rand& rng, const Vocabulary& vocab) {
  using Pointer = nlohmann::json::json_pointer;
  std::vector<Pointer> all;
  places(doc, Pointer(), all);
  const Pointer at = all[rng() % all.size()];
  nlohmann::json& v = doc[at];
  if (v.is_object()) {
    if (!v.empty() && rng() % 3 == 0) {
      auto it = v.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % v.size()));
      v.erase(it);
    } else {
      const std::string& key = pick(rng, vocab.keys);
      v[key] = v.contains(key) ? replacement(rng, vocab, v[key]) : any_value(rng, vocab, nlohmann::json());
    }
  } else if (v.is_array()) {
    switch (v.empty() ? 3 : rng() % 4) {
      case 0:  // remove one
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(rng() % v.size()));
        break;
      case 1:  // duplicate one (a second link between the same endpoints, a repeated GPU count)
        v.push_back(v[rng() % v.size()]);
        break;
      case 2:  // swap two (order rules)
        std::swap(v[rng() % v.size()], v[rng() % v.size()]);
        break;
      default:  // append a value like the last one
        v.push_back(v.empty() ? any_value(rng, vocab, nlohmann::json()) : replacement(rng, vocab, v.back()));
    }
  } else if (!at.empty() && rng() % 6 == 0) {  // copy another subtree here
    const Pointer from = all[rng() % all.size()];
    if (from != at && !(at.to_string().rfind(from.to_string() + "/", 0) == 0)) {
      const nlohmann::json copy = doc[from];
      doc[at] = copy;
    }
  } else {
    v = replacement(rng, vocab, v);
  }
}

}  // namespace detail

// The body of LLVMFuzzerCustomMutator.
inline size_t mutate_json(uint8_t* data, size_t size, size_t max_size, unsigned int seed, const Vocabulary& vocab) {
  std::minstd_rand rng(seed);
  if (rng() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return LLVMFuzzerMutate(data, size, max_size);
  const int changes = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < changes; ++i) detail::mutate_once(doc, rng, vocab);
  const std::string text = doc.dump(rng() % 2 ? 1 : -1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

}  // namespace paratwin::fuzz
