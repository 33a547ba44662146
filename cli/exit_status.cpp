#include "cli/exit_status.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/job_failed.hpp"
#include "workloads/program_graph.hpp"

namespace paratwin::cli {

namespace {

// nlohmann::json's error 316: text that is not UTF-8 on its way into a JSON output. Names and arguments
// that go there are checked where they are read (exit 2 naming them) or written with U+FFFD; this is the
// net under any that is not, still bad input rather than a crash.
bool not_utf8(const std::exception& e) {
  const auto* j = dynamic_cast<const nlohmann::json::type_error*>(&e);
  return j != nullptr && j->id == 316;
}

}  // namespace

int exit_status_of(const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e) != nullptr || not_utf8(e)) return kExitBadInput;
  if (dynamic_cast<const JobFailed*>(&e) != nullptr) return kExitJobFailed;
  return kExitInternal;
}

int report_error(const std::exception& e) {
  if (dynamic_cast<const workloads::ProgramError*>(&e) != nullptr)
    std::cerr << "paratwin: internal error: the lowered program is invalid: " << e.what() << "\n";
  else if (not_utf8(e))
    std::cerr << "paratwin: error: an argument or file name is not UTF-8 text, which a JSON output cannot hold ("
              << e.what() << "): give it in UTF-8\n";
  else
    std::cerr << "paratwin: error: " << e.what() << "\n";
  return exit_status_of(e);
}

}  // namespace paratwin::cli
