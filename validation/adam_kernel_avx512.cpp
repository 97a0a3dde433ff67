// The AVX-512 kernel: 16 lanes, F16C-style conversions (VCVTPH2PS / VCVTPS2PH), bf16 by integer
// bit manipulation.  Compiled for AVX-512 through target attributes only, so the library still
// runs on any x86-64; adam_step_slice calls it only after checking the CPU.
#include <cstdint>
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_* values it then reports as
// "maybe uninitialized"; a false positive of the header, not of this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "validation/adam_step.hpp"

#define LUWU_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c")))

namespace luwu::validation {

namespace {

template <HalfFormat F>
LUWU_TARGET_AVX512 inline __m512 load_half16(const std::uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (F == HalfFormat::fp16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

template <HalfFormat F>
LUWU_TARGET_AVX512 inline __m256i to_half16(__m512 x) {
  if constexpr (F == HalfFormat::fp16) return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // bf16: (bits + 0x7fff + lsb) >> 16, NaN -> (bits >> 16) | 0x40, as fp32_to_bf16_bits.
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __m512i quiet_nan = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  const __mmask16 is_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(is_nan, rounded, quiet_nan));
}

// The 16-bit parameters are only written: streaming stores skip the read-for-ownership of their
// lines (2 B/param of the 30 the step would otherwise move).
template <HalfFormat F, bool kStreamOut>
LUWU_TARGET_AVX512 void avx512_loop(const AdamStepScalars& s, const AdamSlice& x, std::size_t vector_count) {
  const __m512 beta1 = _mm512_set1_ps(s.beta1), one_minus_beta1 = _mm512_set1_ps(s.one_minus_beta1);
  const __m512 beta2 = _mm512_set1_ps(s.beta2), one_minus_beta2 = _mm512_set1_ps(s.one_minus_beta2);
  const __m512 step_size = _mm512_set1_ps(s.step_size), inv_sqrt_bc2 = _mm512_set1_ps(s.inv_sqrt_bias_correction2);
  const __m512 epsilon = _mm512_set1_ps(s.epsilon), l2 = _mm512_set1_ps(s.l2_weight_decay);
  const __m512 minus_decay = _mm512_set1_ps(-s.decoupled_decay);
  for (std::size_t i = 0; i < vector_count; i += 16) {
    __m512 g = load_half16<F>(x.gradients + i);
    __m512 p = _mm512_loadu_ps(x.master + i);
    g = _mm512_fmadd_ps(l2, p, g);
    const __m512 m = _mm512_fmadd_ps(beta1, _mm512_loadu_ps(x.m + i), _mm512_mul_ps(one_minus_beta1, g));
    const __m512 v = _mm512_fmadd_ps(beta2, _mm512_loadu_ps(x.v + i), _mm512_mul_ps(_mm512_mul_ps(one_minus_beta2, g), g));
    const __m512 denominator = _mm512_fmadd_ps(_mm512_sqrt_ps(v), inv_sqrt_bc2, epsilon);
    const __m512 decay = _mm512_mul_ps(minus_decay, p);
    p = _mm512_add_ps(p, _mm512_fnmadd_ps(step_size, _mm512_div_ps(m, denominator), decay));
    _mm512_storeu_ps(x.m + i, m);
    _mm512_storeu_ps(x.v + i, v);
    _mm512_storeu_ps(x.master + i, p);
    if constexpr (kStreamOut)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(x.params_out + i), to_half16<F>(p));
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(x.params_out + i), to_half16<F>(p));
  }
  if constexpr (kStreamOut) _mm_sfence();  // make the streamed lines visible before returning
}

}  // namespace

void adam_step_avx512(const AdamStepScalars& s, HalfFormat format, const AdamSlice& slice) {
  const std::size_t vector_count = slice.count & ~std::size_t{15};
  const bool aligned_out = reinterpret_cast<std::uintptr_t>(slice.params_out) % 32 == 0;
  if (format == HalfFormat::fp16)
    aligned_out ? avx512_loop<HalfFormat::fp16, true>(s, slice, vector_count)
                : avx512_loop<HalfFormat::fp16, false>(s, slice, vector_count);
  else
    aligned_out ? avx512_loop<HalfFormat::bf16, true>(s, slice, vector_count)
                : avx512_loop<HalfFormat::bf16, false>(s, slice, vector_count);
  adam_step_scalar(s, format, slice.sub(vector_count, slice.count));
}

}  // namespace luwu::validation
