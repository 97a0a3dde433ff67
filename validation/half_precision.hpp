#pragma once
// Bit-exact software conversions between fp32 and the two 16-bit formats the optimizer sees
// (IEEE fp16 and bfloat16), rounding to nearest even.  The fp16 ones give the same bits as the
// F16C instructions (VCVTPH2PS, VCVTPS2PH with round-to-nearest) for every input, NaNs included,
// so the scalar and the vector kernels agree bit for bit.
#include <bit>
#include <cstdint>

namespace luwu::validation {

// fp32 -> fp16, round to nearest even; overflow gives infinity; NaN stays NaN (quietened, the
// top payload bits kept, as VCVTPS2PH does).
inline std::uint16_t fp32_to_fp16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)  // NaN
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u)  // >= 65520, which rounds (ties to even) past 65504 to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal fp16
    const std::uint32_t kept_lsb = (magnitude >> 13) & 1u;
    magnitude += 0xc8000fffu + kept_lsb;  // exponent bias 127 -> 15 (-112 << 23), plus rounding
    return static_cast<std::uint16_t>(sign | (magnitude >> 13));
  }
  // Subnormal fp16 or zero: adding 0.5f (whose ulp is 2^-24, the fp16 subnormal step) lets the
  // FPU round to nearest even; the low mantissa bits are then the fp16 subnormal.
  const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
  return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u));
}

// fp16 -> fp32, exact (every fp16 value is an fp32 value); NaN is quietened as VCVTPH2PS does.
inline float fp16_bits_to_fp32(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu;
  const std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) {
    const std::uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
  }
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in fp32
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// fp32 -> bf16: keep the top 16 bits, rounding to nearest even; NaN stays a quiet NaN.
inline std::uint16_t fp32_to_bf16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  const std::uint32_t kept_lsb = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7fffu + kept_lsb) >> 16);
}

// bf16 -> fp32: exact, the bf16 bits are the top half of the fp32 bits.
inline float bf16_bits_to_fp32(std::uint16_t half) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(half) << 16);
}

}  // namespace luwu::validation
