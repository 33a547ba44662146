// Fitting profile parameters: α-β lines recover the parameters that generated exact data, and stay close
// under noise (the GEMM model's fit: gemm_fit_test.cpp).
#include "calibration/fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "topology/machine.hpp"

namespace pc = paratwin::calibration;

TEST(FitLine, AlphaBetaOfARing) {
  // A ring all-reduce over p = 4: 2(p-1)α + 2(p-1)/p · n/β with α = 3 µs, β = 5 GB/s.
  std::vector<double> n, t;
  for (double b = 1e3; b <= 1e8; b *= 10) {
    n.push_back(b);
    t.push_back(6 * 3e-6 + 1.5 * b / 5e9);
  }
  const auto fit = pc::fit_line(n, t);
  EXPECT_NEAR(fit.intercept / 6, 3e-6, 1e-12);
  EXPECT_NEAR(1.5 / fit.slope, 5e9, 1e-3 * 5e9);
  EXPECT_THROW(pc::fit_line({1, 1}, {2, 3}), std::invalid_argument);
}

TEST(FitPlane, StepCostAndSecondsPerByteOverKindsAndSizes) {
  // steps · 40 µs + bus bytes / 3 GB/s, over 1 and 2 steps and several sizes.
  std::vector<double> u, v, t;
  for (double steps : {1.0, 2.0})
    for (double bytes = 1e3; bytes <= 1e7; bytes *= 10) {
      u.push_back(steps);
      v.push_back(bytes);
      t.push_back(steps * 40e-6 + bytes / 3e9);
    }
  const auto fit = pc::fit_plane(u, v, t);
  EXPECT_NEAR(fit.a, 40e-6, 1e-12);
  EXPECT_NEAR(1 / fit.b, 3e9, 1e-3 * 3e9);
  EXPECT_LT(fit.rms_relative_error, 1e-9);
  EXPECT_THROW(pc::fit_plane({1, 2}, {2, 4}, {1, 2}), std::invalid_argument);  // v = 2u: not independent
}
