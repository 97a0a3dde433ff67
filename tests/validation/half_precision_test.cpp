// fp16 / bf16 conversions: hand-derived bit patterns, and agreement with the F16C instructions.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <immintrin.h>

#include "validation/half_precision.hpp"

using namespace luwu::validation;

namespace {
float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }
std::uint32_t to_bits(float f) { return std::bit_cast<std::uint32_t>(f); }
}  // namespace

TEST_CASE("fp32 -> fp16 gives the IEEE binary16 patterns, rounding to nearest even") {
  CHECK(fp32_to_fp16_bits(1.0f) == 0x3c00);
  CHECK(fp32_to_fp16_bits(-2.0f) == 0xc000);
  CHECK(fp32_to_fp16_bits(0.0f) == 0x0000);
  CHECK(fp32_to_fp16_bits(-0.0f) == 0x8000);
  CHECK(fp32_to_fp16_bits(65504.0f) == 0x7bff);        // largest finite fp16
  CHECK(fp32_to_fp16_bits(65519.996f) == 0x7bff);      // below the halfway point to 65536
  CHECK(fp32_to_fp16_bits(65520.0f) == 0x7c00);        // halfway, 0x7bff is odd: ties to even = infinity
  CHECK(fp32_to_fp16_bits(INFINITY) == 0x7c00);
  CHECK(fp32_to_fp16_bits(-INFINITY) == 0xfc00);
  CHECK(fp32_to_fp16_bits(0x1p-14f) == 0x0400);        // smallest normal
  CHECK(fp32_to_fp16_bits(0x1p-24f) == 0x0001);        // smallest subnormal
  CHECK(fp32_to_fp16_bits(0x1p-25f) == 0x0000);        // halfway between 0 and 2^-24: even is 0
  CHECK(fp32_to_fp16_bits(0x1.8p-25f) == 0x0001);      // above halfway
  CHECK(fp32_to_fp16_bits(0x1.8p-24f) == 0x0002);      // 1.5 ulp: tie between 1 and 2, even is 2
  // 1/3 = 0x3eaaaaab: mantissa 0x2aaaab, top 10 bits 0x155, dropped 0xaab < half: 0x3400 | 0x155.
  CHECK(fp32_to_fp16_bits(1.0f / 3.0f) == 0x3555);
  CHECK(fp32_to_fp16_bits(1.0f + 0x1p-11f) == 0x3c00);      // tie, 0x3c00 even: down
  CHECK(fp32_to_fp16_bits(1.0f + 3 * 0x1p-11f) == 0x3c02);  // tie, 0x3c01 odd: up
  CHECK(fp32_to_fp16_bits(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);  // just above the tie
  const std::uint16_t nan = fp32_to_fp16_bits(NAN);
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x03ff) != 0);
}

TEST_CASE("fp16 -> fp32 is exact") {
  CHECK(fp16_bits_to_fp32(0x3c00) == 1.0f);
  CHECK(fp16_bits_to_fp32(0x7bff) == 65504.0f);
  CHECK(fp16_bits_to_fp32(0x0001) == 0x1p-24f);
  CHECK(fp16_bits_to_fp32(0x03ff) == 1023 * 0x1p-24f);
  CHECK(fp16_bits_to_fp32(0x3555) == 0.333251953125f);  // (1024 + 0x155) / 1024 * 2^-2
  CHECK(to_bits(fp16_bits_to_fp32(0x8000)) == 0x80000000u);
  CHECK(fp16_bits_to_fp32(0xfc00) == -INFINITY);
  CHECK(std::isnan(fp16_bits_to_fp32(0x7e00)));
  // Every finite fp16 survives the round trip.
  for (std::uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 0x7c00) != 0x7c00) REQUIRE(fp32_to_fp16_bits(fp16_bits_to_fp32(static_cast<std::uint16_t>(h))) == h);
}

TEST_CASE("bf16 keeps the top half of the fp32 bits, rounding to nearest even") {
  CHECK(fp32_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(fp32_to_bf16_bits(from_bits(0x3f808000u)) == 0x3f80);  // tie, 0x3f80 even: down
  CHECK(fp32_to_bf16_bits(from_bits(0x3f818000u)) == 0x3f82);  // tie, 0x3f81 odd: up
  CHECK(fp32_to_bf16_bits(from_bits(0x3f808001u)) == 0x3f81);  // above the tie
  CHECK(fp32_to_bf16_bits(from_bits(0x40490fdbu)) == 0x4049);  // pi
  CHECK(fp32_to_bf16_bits(from_bits(0x7f7fffffu)) == 0x7f80);  // largest float rounds to infinity
  CHECK(fp32_to_bf16_bits(-INFINITY) == 0xff80);
  CHECK(fp32_to_bf16_bits(from_bits(0x7f800001u)) == 0x7fc0);  // signalling NaN: stays NaN, quietened
  CHECK(bf16_bits_to_fp32(0x4049) == 3.140625f);
  CHECK(to_bits(bf16_bits_to_fp32(0x8001)) == 0x80010000u);
}

namespace {
__attribute__((target("f16c"))) std::uint16_t hardware_to_fp16(float f) {
  return static_cast<std::uint16_t>(
      _mm_extract_epi16(_mm_cvtps_ph(_mm_set1_ps(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 0));
}
__attribute__((target("f16c"))) float hardware_from_fp16(std::uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_set1_epi16(static_cast<short>(h))));
}
}  // namespace

TEST_CASE("the software fp16 conversions give the F16C instructions' bits") {
  if (!__builtin_cpu_supports("f16c")) {
    MESSAGE("no F16C on this CPU: skipped");
    return;
  }
  for (std::uint32_t h = 0; h < 0x10000; ++h)
    REQUIRE(to_bits(fp16_bits_to_fp32(static_cast<std::uint16_t>(h))) ==
            to_bits(hardware_from_fp16(static_cast<std::uint16_t>(h))));
  // fp32 patterns sampled with an odd stride that visits every exponent and many mantissas.
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 4093) {
    const float f = from_bits(static_cast<std::uint32_t>(b));
    REQUIRE(fp32_to_fp16_bits(f) == hardware_to_fp16(f));
  }
}
