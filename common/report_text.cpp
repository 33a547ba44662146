#include "common/report_text.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace paratwin {

std::string fixed_number(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v.get<double>());
    return text;
  }
  return v.get<std::string>();
}

std::string formatted(double v, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string printed(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(size > 0 ? static_cast<size_t>(size) : 0, '\0');
  if (size > 0) std::vsnprintf(text.data(), text.size() + 1, format, again);
  va_end(again);
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string gp_terminal(const std::string& format, int width, int height) {
  const std::string size = std::to_string(width) + "," + std::to_string(height);
  if (format == "png") return "pngcairo size " + size + " font 'sans,10'";
  return "svg size " + size + " dynamic background rgb 'white' font 'sans,11'";
}

std::string gp_string(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string gp_label(std::string text) {
  std::replace(text.begin(), text.end(), '"', '\'');
  return "\"" + text + "\"";
}

}  // namespace paratwin
