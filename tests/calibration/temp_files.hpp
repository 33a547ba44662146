#pragma once
// A fixture with a temporary folder of input files (one w.json workload placeholder) and a helper that
// returns the message of the InputError a call throws.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/input_error.hpp"

namespace paratwin::test {

class TempFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("paratwin-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    write("w.json", "{}");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const paratwin::InputError& e) {
      return e.what();
    }
    return "no error";
  }
  std::filesystem::path dir_;
};

}  // namespace paratwin::test
