// The AVX2 kernel: 8 lanes, F16C conversions (_mm256_cvtph_ps / _mm256_cvtps_ph), bf16 by integer
// bit manipulation.  Compiled for AVX2 through target attributes only; adam_step_slice calls it
// only after checking the CPU.
#include <immintrin.h>

#include "validation/adam_step.hpp"

#define LUWU_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace luwu::validation {

namespace {

template <HalfFormat F>
LUWU_TARGET_AVX2 inline __m256 load_half8(const std::uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (F == HalfFormat::fp16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

template <HalfFormat F>
LUWU_TARGET_AVX2 inline __m128i to_half8(__m256 x) {
  if constexpr (F == HalfFormat::fp16) return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // bf16: (bits + 0x7fff + lsb) >> 16, NaN -> (bits >> 16) | 0x40, as fp32_to_bf16_bits.
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  const __m256i halves = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
  // Every lane holds a value below 2^16, so the unsigned saturating pack just narrows.
  return _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
}

template <HalfFormat F>
LUWU_TARGET_AVX2 void avx2_loop(const AdamStepScalars& s, const AdamSlice& x, std::size_t vector_count) {
  const __m256 beta1 = _mm256_set1_ps(s.beta1), one_minus_beta1 = _mm256_set1_ps(s.one_minus_beta1);
  const __m256 beta2 = _mm256_set1_ps(s.beta2), one_minus_beta2 = _mm256_set1_ps(s.one_minus_beta2);
  const __m256 step_size = _mm256_set1_ps(s.step_size), inv_sqrt_bc2 = _mm256_set1_ps(s.inv_sqrt_bias_correction2);
  const __m256 epsilon = _mm256_set1_ps(s.epsilon), l2 = _mm256_set1_ps(s.l2_weight_decay);
  const __m256 minus_decay = _mm256_set1_ps(-s.decoupled_decay);
  for (std::size_t i = 0; i < vector_count; i += 8) {
    __m256 g = load_half8<F>(x.gradients + i);
    __m256 p = _mm256_loadu_ps(x.master + i);
    g = _mm256_fmadd_ps(l2, p, g);
    const __m256 m = _mm256_fmadd_ps(beta1, _mm256_loadu_ps(x.m + i), _mm256_mul_ps(one_minus_beta1, g));
    const __m256 v = _mm256_fmadd_ps(beta2, _mm256_loadu_ps(x.v + i), _mm256_mul_ps(_mm256_mul_ps(one_minus_beta2, g), g));
    const __m256 denominator = _mm256_fmadd_ps(_mm256_sqrt_ps(v), inv_sqrt_bc2, epsilon);
    const __m256 decay = _mm256_mul_ps(minus_decay, p);
    p = _mm256_add_ps(p, _mm256_fnmadd_ps(step_size, _mm256_div_ps(m, denominator), decay));
    _mm256_storeu_ps(x.m + i, m);
    _mm256_storeu_ps(x.v + i, v);
    _mm256_storeu_ps(x.master + i, p);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(x.params_out + i), to_half8<F>(p));
  }
}

}  // namespace

void adam_step_avx2(const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice) {
  const std::size_t vector_count = slice.count & ~std::size_t{7};
  if (format == HalfFormat::fp16)
    avx2_loop<HalfFormat::fp16>(s, slice, vector_count);
  else
    avx2_loop<HalfFormat::bf16>(s, slice, vector_count);
  adam_step_scalar(s, format, slice.sub(vector_count, slice.count));
}

}  // namespace luwu::validation
