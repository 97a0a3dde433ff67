// The fp32 kernels against the double-precision reference, and bit-for-bit agreement between
// instruction-set paths and thread counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "tests/validation/adam_test_data.hpp"
#include "validation/adam_parallel.hpp"
#include "validation/adam_reference.hpp"

using namespace luwu::validation;
using namespace luwu::validation::testing;

namespace {

constexpr std::size_t kParams = 10007;  // not a multiple of any vector width: the tails run too
constexpr int kSteps = 100;

AdamHyperparameters hyperparameters(WeightDecayMode mode) {
  AdamHyperparameters h;  // PyTorch's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8
  h.weight_decay = 0.01;
  h.weight_decay_mode = mode;
  return h;
}

std::vector<KernelIsa> supported_isas() {
  std::vector<KernelIsa> out;
  for (KernelIsa isa : {KernelIsa::scalar, KernelIsa::avx2, KernelIsa::avx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

// Runs kSteps steps with one kernel; returns the final state.
OptimizerState run_kernel(KernelIsa isa, HalfFormat format, WeightDecayMode mode, unsigned threads) {
  const AdamHyperparameters h = hyperparameters(mode);
  OptimizerState state = random_state(kParams, 42);
  std::mt19937_64 grad_rng(7);
  ThreadPool pool(threads);
  for (int step = 1; step <= kSteps; ++step) {
    const auto grads = random_gradients(kParams, format, grad_rng);
    adam_step_parallel(pool, isa, AdamStepScalars::for_step(h, step), format, slice_of(state, grads));
  }
  return state;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

// Two references, both computing in double (validation/adam_reference.hpp):
//  - fp32 state, as the mixed-precision algorithm stores it.  The kernels must match it within
//    1e-6 relative, element by element: what is left is the kernels' own fp32 arithmetic (a few
//    ulps of the increment dp ~ lr = 1e-3, i.e. ~1e-3 * 2^-21 absolute), which flips a rounding of
//    p only rarely (measured: 2.2e-7..3.5e-7); a wrong bias correction, decay or moment update
//    moves p by a sizeable part of lr and shows up orders of magnitude above.
//  - double state, the ideal optimizer.  Here any fp32 optimizer also carries the storage's
//    rounding: half an ulp (2^-24 relative) per step, a random walk of about sqrt(100/12) = 2.9
//    half-ulps (3.4e-7 for p near 0.5) whose largest of 10^4 elements reaches about 1.2e-6.  So
//    against it the test checks the normwise error max|p - ref| / max|ref| <= 1e-6 and, element
//    by element, the worst case: 100 steps of one ulp (2^-23) relative each.
TEST_CASE("every kernel path stays within 1e-6 relative of the double-precision reference over 100 steps") {
  for (HalfFormat format : {HalfFormat::fp16, HalfFormat::bf16}) {
    for (WeightDecayMode mode : {WeightDecayMode::l2_in_gradient, WeightDecayMode::decoupled}) {
      // The references, fed the same 16-bit gradients converted exactly to fp32.
      const AdamHyperparameters h = hyperparameters(mode);
      const OptimizerState start = random_state(kParams, 42);
      std::vector<double> ideal(start.master.begin(), start.master.end()), ideal_m(kParams, 0.0), ideal_v(kParams, 0.0);
      std::vector<float> stored(start.master), stored_m(kParams, 0.0f), stored_v(kParams, 0.0f);
      std::mt19937_64 grad_rng(7);
      std::vector<float> grads_fp32(kParams);
      for (int step = 1; step <= kSteps; ++step) {
        const auto grads = random_gradients(kParams, format, grad_rng);
        for (std::size_t i = 0; i < kParams; ++i) grads_fp32[i] = half_to_float(grads[i], format);
        adam_step_reference(h, step, grads_fp32.data(), ideal.data(), ideal_m.data(), ideal_v.data(), kParams);
        adam_step_reference(h, step, grads_fp32.data(), stored.data(), stored_m.data(), stored_v.data(), kParams);
      }
      for (KernelIsa isa : supported_isas()) {
        CAPTURE(isa_name(isa));
        CAPTURE(std::string(format == HalfFormat::fp16 ? "fp16" : "bf16"));
        CAPTURE(std::string(mode == WeightDecayMode::decoupled ? "AdamW" : "Adam"));
        const OptimizerState got = run_kernel(isa, format, mode, 1);
        double max_error = 0, max_reference = 0, max_element_error_ideal = 0, max_element_error_stored = 0,
               max_moved = 0;
        for (std::size_t i = 0; i < kParams; ++i) {
          const double error = std::fabs(got.master[i] - ideal[i]);
          max_error = std::max(max_error, error);
          max_reference = std::max(max_reference, std::fabs(ideal[i]));
          max_element_error_ideal = std::max(max_element_error_ideal, error / std::fabs(ideal[i]));
          max_element_error_stored = std::max(
              max_element_error_stored, std::fabs(static_cast<double>(got.master[i]) - stored[i]) / std::fabs(stored[i]));
          max_moved = std::max(max_moved, std::fabs(ideal[i] - start.master[i]));
        }
        CHECK(max_moved > 1e-2);  // the parameters did move: ~lr per step for 100 steps
        CHECK(max_element_error_stored <= 1e-6);
        CHECK(max_error / max_reference <= 1e-6);
        CHECK(max_element_error_ideal <= kSteps * 0x1p-23);
        MESSAGE("max relative error: elementwise vs fp32-state reference " << max_element_error_stored
                                                                            << "; vs double-state reference normwise "
                                                                            << max_error / max_reference << ", elementwise "
                                                                            << max_element_error_ideal);
        // The 16-bit parameters written out are the final master parameters, rounded.
        for (std::size_t i = 0; i < kParams; ++i) {
          const std::uint16_t expected =
              format == HalfFormat::fp16 ? fp32_to_fp16_bits(got.master[i]) : fp32_to_bf16_bits(got.master[i]);
          REQUIRE(got.params_out[i] == expected);
        }
      }
    }
  }
}

TEST_CASE("all instruction-set paths give the same bits as the scalar kernel") {
  for (HalfFormat format : {HalfFormat::fp16, HalfFormat::bf16}) {
    for (WeightDecayMode mode : {WeightDecayMode::l2_in_gradient, WeightDecayMode::decoupled}) {
      const OptimizerState scalar = run_kernel(KernelIsa::scalar, format, mode, 1);
      for (KernelIsa isa : supported_isas()) {
        CAPTURE(isa_name(isa));
        const OptimizerState vector = run_kernel(isa, format, mode, 1);
        CHECK(same_bits(vector.master, scalar.master));
        CHECK(same_bits(vector.m, scalar.m));
        CHECK(same_bits(vector.v, scalar.v));
        CHECK(vector.params_out == scalar.params_out);
      }
    }
  }
}

TEST_CASE("multithreaded steps give the same bits as one thread") {
  const KernelIsa isa = best_isa();
  for (HalfFormat format : {HalfFormat::fp16, HalfFormat::bf16}) {
    const OptimizerState one = run_kernel(isa, format, WeightDecayMode::decoupled, 1);
    for (unsigned threads : {2u, 3u, 5u}) {
      CAPTURE(threads);
      const OptimizerState many = run_kernel(isa, format, WeightDecayMode::decoupled, threads);
      CHECK(same_bits(many.master, one.master));
      CHECK(same_bits(many.m, one.m));
      CHECK(same_bits(many.v, one.v));
      CHECK(many.params_out == one.params_out);
    }
  }
}

TEST_CASE("step scalars follow PyTorch's bias correction") {
  AdamHyperparameters h;
  h.learning_rate = 0.01;
  h.weight_decay = 0.1;
  // Step 1: bias corrections 1 - 0.9 = 0.1 and 1 - 0.999 = 0.001.
  const AdamStepScalars s = AdamStepScalars::for_step(h, 1);
  CHECK(s.step_size == doctest::Approx(0.01 / 0.1).epsilon(1e-7));
  CHECK(s.inv_sqrt_bias_correction2 == doctest::Approx(1.0 / std::sqrt(0.001)).epsilon(1e-7));
  CHECK(s.l2_weight_decay == doctest::Approx(0.1));
  CHECK(s.decoupled_decay == 0.0f);
  h.weight_decay_mode = WeightDecayMode::decoupled;
  const AdamStepScalars w = AdamStepScalars::for_step(h, 1);
  CHECK(w.l2_weight_decay == 0.0f);
  CHECK(w.decoupled_decay == doctest::Approx(0.01 * 0.1).epsilon(1e-7).scale(0));
  CHECK_THROWS_AS(AdamStepScalars::for_step(h, 0), std::invalid_argument);
}
