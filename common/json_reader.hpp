#pragma once
// Strict reading of a JSON object: every key read is recorded, and finish() rejects the keys nobody
// read, so a misspelt option is an error instead of a silently applied default.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/input_error.hpp"

namespace paratwin {

class JsonReader {
 public:
  // `format_doc` names the documentation that unknown-key errors point to.
  JsonReader(const nlohmann::json& object, std::string path, std::string format_doc = "");

  const std::string& path() const { return path_; }
  std::string child_path(const std::string& key) const;
  bool has(const std::string& key) const;
  // The object's keys in document order (for objects keyed by names the caller checks, e.g. axes).
  std::vector<std::string> keys() const;

  int64_t integer(const std::string& key, std::optional<int64_t> fallback = std::nullopt, int64_t min = INT64_MIN,
                  int64_t max = INT64_MAX);
  double number(const std::string& key, std::optional<double> fallback = std::nullopt, double min = -1e300,
                double max = 1e300);
  bool boolean(const std::string& key, std::optional<bool> fallback = std::nullopt);
  std::string string(const std::string& key, std::optional<std::string> fallback = std::nullopt);
  // A string that must be one of `allowed`; the error lists them.
  std::string choice(const std::string& key, const std::vector<std::string>& allowed,
                     std::optional<std::string> fallback = std::nullopt);
  std::vector<std::string> string_list(const std::string& key);
  std::vector<int64_t> integer_list(const std::string& key, int64_t min, int64_t max);
  std::vector<double> number_list(const std::string& key, double min, double max);
  // An array of objects, one reader each (paths "key[i]"); an absent key gives none.
  std::vector<JsonReader> objects(const std::string& key);
  // A nested object; an absent key gives an empty object so that defaults apply inside it.
  JsonReader object(const std::string& key);

  // Throws InputError naming the first key that was never read.
  void finish() const;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const nlohmann::json& required(const std::string& key) const;

  const nlohmann::json* object_;
  std::string path_;
  std::string format_doc_;
  std::set<std::string> read_;
  static const nlohmann::json empty_object_;
};

}  // namespace paratwin
