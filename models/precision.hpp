#pragma once
// Numeric precisions a kernel can run in, and their sizes.
#include <string>

namespace luwu::models {

enum class Precision { Fp16, Bf16, Fp32 };

inline double bytes_per_element(Precision p) { return p == Precision::Fp32 ? 4.0 : 2.0; }

inline std::string to_string(Precision p) {
  switch (p) {
    case Precision::Fp16: return "fp16";
    case Precision::Bf16: return "bf16";
    case Precision::Fp32: return "fp32";
  }
  return "?";
}

}  // namespace luwu::models
