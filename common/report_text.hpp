#pragma once
// Text that reports are made of: fixed number formatting (the same numbers always print the same),
// CSV fields and gnuplot strings.
#include <nlohmann/json.hpp>
#include <string>

namespace paratwin {

// 6 significant digits; integers, booleans and strings as they are; null as an empty field.
std::string fixed_number(const nlohmann::json& v);
// The shortest text that reads back as the same double: for messages that compare a value with a bound,
// where 6 digits would print 1000000.5 as 1e+06, the bound it breaks.
std::string exact_number(double v);
// Where `text` stops being UTF-8 (the offset of the first byte that breaks it: a stray continuation byte,
// a truncated, overlong or surrogate sequence, a code point past U+10FFFF), or npos. JSON text is UTF-8
// (RFC 8259 §8.1): a name from a command line or a file name may not be.
size_t invalid_utf8_at(const std::string& text);
// One number in a printf format of one conversion (e.g. "%.4g", "%+.1f").
std::string formatted(double v, const char* format);
// A whole printf format: the fixed-width columns of report tables, as text that a caller prints or writes.
std::string printed(const char* format, ...) __attribute__((format(printf, 1, 2)));
// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text);
// gnuplot's terminal for `format` ("png": cairo, else SVG on white) of width × height pixels.
std::string gp_terminal(const std::string& format, int width, int height);
// A gnuplot single-quoted string: only the quote itself needs escaping (doubled).
std::string gp_string(const std::string& text);
// A gnuplot datablock field: quoted, with double quotes (which gnuplot cannot escape there) replaced.
std::string gp_label(std::string text);

}  // namespace paratwin
