#pragma once
// Deterministic random optimizer states and gradients for the kernel tests (fixed seeds; values
// built from the raw generator bits so they are the same with every standard library).
#include <cstdint>
#include <random>
#include <vector>

#include "validation/adam_step.hpp"
#include "validation/half_precision.hpp"

namespace luwu::validation::testing {

// Uniform in [0, 1) with 24 random bits.
inline float unit_uniform(std::mt19937_64& rng) { return static_cast<float>(rng() >> 40) * 0x1p-24f; }

struct OptimizerState {
  std::vector<float> master, m, v;
  std::vector<std::uint16_t> params_out;
  explicit OptimizerState(std::size_t n) : master(n), m(n, 0.0f), v(n, 0.0f), params_out(n, 0) {}
};

// Master parameters of magnitude [0.5, 1) and random sign; fresh moments (zero), as at the start
// of training.  Magnitudes stay away from zero so that relative errors are meaningful.
inline OptimizerState random_state(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  OptimizerState s(n);
  for (auto& p : s.master) p = (rng() & 1 ? 1.0f : -1.0f) * (0.5f + 0.5f * unit_uniform(rng));
  return s;
}

// Gradients in [-1, 1), rounded to the 16-bit format.
inline std::vector<std::uint16_t> random_gradients(std::size_t n, HalfFormat format, std::mt19937_64& rng) {
  std::vector<std::uint16_t> g(n);
  for (auto& x : g) {
    const float value = 2.0f * unit_uniform(rng) - 1.0f;
    x = format == HalfFormat::fp16 ? fp32_to_fp16_bits(value) : fp32_to_bf16_bits(value);
  }
  return g;
}

inline float half_to_float(std::uint16_t h, HalfFormat format) {
  return format == HalfFormat::fp16 ? fp16_bits_to_fp32(h) : bf16_bits_to_fp32(h);
}

inline AdamSlice slice_of(OptimizerState& s, const std::vector<std::uint16_t>& g) {
  return {s.master.data(), s.m.data(), s.v.data(), g.data(), s.params_out.data(), s.master.size()};
}

}  // namespace luwu::validation::testing
