#include "common/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/report_text.hpp"

namespace paratwin {

const nlohmann::json JsonReader::empty_object_ = nlohmann::json::object();

namespace {
std::string type_name(const nlohmann::json& v) {
  return v.type_name();
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

JsonReader::JsonReader(const nlohmann::json& object, std::string path, std::string format_doc)
    : object_(&object), path_(std::move(path)), format_doc_(std::move(format_doc)) {
  if (!object.is_object())
    throw InputError(path_.empty() ? "(top level)" : path_, "expected a JSON object, found " + type_name(object));
}

std::string JsonReader::child_path(const std::string& key) const {
  // The empty key is a key too: shown quoted, so that its path is never empty.
  const std::string shown = key.empty() ? "\"\"" : key;
  return path_.empty() ? shown : path_ + "." + shown;
}

bool JsonReader::has(const std::string& key) const {
  return object_->contains(key);
}

void JsonReader::fail(const std::string& key, const std::string& message) const {
  throw InputError(child_path(key), message);
}

const nlohmann::json& JsonReader::required(const std::string& key) const {
  auto it = object_->find(key);
  if (it == object_->end()) {
    // A misspelt required key is the likely cause: name it.
    for (auto other = object_->begin(); other != object_->end(); ++other)
      if (edit_distance(other.key(), key) <= 2)
        fail(key, "is required but missing (found \"" + other.key() + "\": misspelt?)");
    fail(key, "is required but missing");
  }
  return *it;
}

int64_t JsonReader::integer(const std::string& key, std::optional<int64_t> fallback, int64_t min, int64_t max) {
  read_.insert(key);
  if (!has(key)) {
    if (fallback) return *fallback;
    required(key);
  }
  const auto& v = (*object_)[key];
  const auto out_of_range = [&](const std::string& shown) {
    std::ostringstream s;
    s << "= " << shown << " is out of range [" << min << ", " << max << "]";
    fail(key, s.str());
  };
  // Beyond 2^63 the parser keeps an unsigned integer, beyond 2^64 a double: a whole number too large for
  // the rule is said to be so, not to be no integer.
  const bool whole =
      v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>());
  if (whole && std::fabs(v.get<double>()) >= 9e15) out_of_range(v.dump());
  int64_t value = 0;
  if (v.is_number_unsigned()) {  // nlohmann counts unsigned numbers as integers too: test it first
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) out_of_range(v.dump());
    value = static_cast<int64_t>(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    value = v.get<int64_t>();
  } else if (whole) {
    value = static_cast<int64_t>(v.get<double>());
  } else {
    fail(key, "expected an integer, found " + (v.is_number() ? v.dump() : type_name(v)));
  }
  if (value < min || value > max) out_of_range(std::to_string(value));
  return value;
}

double JsonReader::number(const std::string& key, std::optional<double> fallback, double min, double max) {
  read_.insert(key);
  if (!has(key)) {
    if (fallback) return *fallback;
    required(key);
  }
  const auto& v = (*object_)[key];
  if (!v.is_number()) fail(key, "expected a number, found " + type_name(v));
  double value = v.get<double>();
  if (!std::isfinite(value) || value < min || value > max)
    fail(key, "= " + exact_number(value) + " is out of range [" + exact_number(min) + ", " + exact_number(max) + "]");
  return value;
}

bool JsonReader::boolean(const std::string& key, std::optional<bool> fallback) {
  read_.insert(key);
  if (!has(key)) {
    if (fallback) return *fallback;
    required(key);
  }
  const auto& v = (*object_)[key];
  if (!v.is_boolean()) fail(key, "expected true or false, found " + type_name(v));
  return v.get<bool>();
}

std::string JsonReader::string(const std::string& key, std::optional<std::string> fallback) {
  read_.insert(key);
  if (!has(key)) {
    if (fallback) return *fallback;
    required(key);
  }
  const auto& v = (*object_)[key];
  if (!v.is_string()) fail(key, "expected a string, found " + type_name(v));
  return v.get<std::string>();
}

std::string JsonReader::choice(const std::string& key, const std::vector<std::string>& allowed,
                               std::optional<std::string> fallback) {
  std::string value = string(key, fallback);
  for (const auto& a : allowed)
    if (a == value) return value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
  fail(key, "= \"" + value + "\" is not one of " + list);
}

std::vector<std::string> JsonReader::string_list(const std::string& key) {
  read_.insert(key);
  const auto& v = required(key);
  if (!v.is_array()) fail(key, "expected an array of strings, found " + type_name(v));
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) fail(key + "[" + std::to_string(i) + "]", "expected a string, found " + type_name(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::vector<int64_t> JsonReader::integer_list(const std::string& key, int64_t min, int64_t max) {
  read_.insert(key);
  const auto& v = required(key);
  if (!v.is_array()) fail(key, "expected an array of integers, found " + type_name(v));
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item = key + "[" + std::to_string(i) + "]";
    if (!v[i].is_number_integer() && !v[i].is_number_unsigned())
      fail(item, "expected an integer, found " + type_name(v[i]));
    if (v[i].is_number_unsigned() && v[i].get<uint64_t>() > static_cast<uint64_t>(max)) fail(item, "is too large");
    int64_t x = v[i].get<int64_t>();
    if (x < min || x > max)
      fail(item,
           "= " + std::to_string(x) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    out.push_back(x);
  }
  return out;
}

std::vector<double> JsonReader::number_list(const std::string& key, double min, double max) {
  read_.insert(key);
  const auto& v = required(key);
  if (!v.is_array()) fail(key, "expected an array of numbers, found " + type_name(v));
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item = key + "[" + std::to_string(i) + "]";
    if (!v[i].is_number()) fail(item, "expected a number, found " + type_name(v[i]));
    const double x = v[i].get<double>();
    if (x < min || x > max)
      fail(item, "= " + exact_number(x) + " is out of range [" + exact_number(min) + ", " + exact_number(max) + "]");
    out.push_back(x);
  }
  return out;
}

std::vector<JsonReader> JsonReader::objects(const std::string& key) {
  read_.insert(key);
  std::vector<JsonReader> out;
  if (!has(key)) return out;
  const auto& v = (*object_)[key];
  if (!v.is_array()) fail(key, "expected an array of objects, found " + type_name(v));
  for (size_t i = 0; i < v.size(); ++i)
    out.emplace_back(v[i], child_path(key + "[" + std::to_string(i) + "]"), format_doc_);
  return out;
}

std::vector<std::string> JsonReader::keys() const {
  std::vector<std::string> out;
  for (auto it = object_->begin(); it != object_->end(); ++it) out.push_back(it.key());
  return out;
}

JsonReader JsonReader::object(const std::string& key) {
  read_.insert(key);
  if (!has(key)) return JsonReader(empty_object_, child_path(key), format_doc_);
  const auto& v = (*object_)[key];
  if (!v.is_object()) fail(key, "expected a JSON object, found " + type_name(v));
  return JsonReader(v, child_path(key), format_doc_);
}

void JsonReader::finish() const {
  for (auto it = object_->begin(); it != object_->end(); ++it)
    if (!read_.count(it.key()))
      fail(it.key(), format_doc_.empty() ? "unknown key" : "unknown key (see " + format_doc_ + " for the format)");
}

}  // namespace paratwin
