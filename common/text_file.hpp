#pragma once
// Writing an output file whole: reports, baselines, profiles and summaries are never left half written.
#include <string>

namespace paratwin {

// Writes `text` to `path` atomically: a temporary file renamed into place, so a failure never leaves
// a half-written file behind. Throws InputError naming `path` when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace paratwin
