#pragma once
// Checks for invalid input, shared by the workload and machine error tests: parsing must throw the
// loader's InputError subclass at the expected JSON path, with a message that names the broken rule
// and a what() that joins the two.
#include <gtest/gtest.h>

#include <exception>
#include <string>

namespace paratwin::test {

// what() joins path and message as "<path>: <message>", or "<path> = ..." when the message starts with
// "= " (a value: "parallelism.tensor.x = 3 does not divide ...").
inline std::string joined(const std::string& path, const std::string& message) {
  if (path.empty()) return message;
  return path + (message.rfind("= ", 0) == 0 ? " " : ": ") + message;
}

// Runs `parse` and checks that it throws `Error` at `path` whose message contains `needle`.
// `error_name` and `input_name` word the failures ("MachineError", "machine").
template <class Error, class Parse>
::testing::AssertionResult rejects_with(Parse&& parse, const char* error_name, const char* input_name,
                                        const std::string& path, const std::string& needle) {
  try {
    parse();
  } catch (const Error& e) {
    if (e.path() != path)
      return ::testing::AssertionFailure()
             << "path is \"" << e.path() << "\", expected \"" << path << "\" (what(): " << e.what() << ")";
    if (e.message().find(needle) == std::string::npos)
      return ::testing::AssertionFailure() << "message \"" << e.message() << "\" does not contain \"" << needle << "\"";
    if (std::string(e.what()) != joined(path, e.message()))
      return ::testing::AssertionFailure() << "what() is \"" << e.what() << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-" << error_name << ": " << e.what();
  }
  return ::testing::AssertionFailure() << "the " << input_name << " was accepted";
}

}  // namespace paratwin::test
