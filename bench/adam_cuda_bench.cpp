// The CUDA optimizer step's own rate, its state resident in HBM, beside the bytes it must move
// (28 per element: read 12 of fp32 state and a 2-byte gradient, write 12 and a 2-byte parameter).
// Built only with -DLUWUSIM_CUDA=ON and nvcc.  Compare with torch's fused AdamW, which bench/gpu_rates.py
// measures in the same run.
//   adam_cuda_bench [--params N] [--repeats R]
// One JSON object per line on stdout.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "validation/adam_cuda.hpp"

using namespace luwu::validation;

int main(int argc, char** argv) {
  std::size_t params = std::size_t{1} << 28;
  int repeats = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--params") == 0) params = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "adam_cuda_bench: unknown option %s (--params N, --repeats R)\n", argv[i]);
      return 2;
    }
  }
  if (params < 1 || params > (std::size_t{1} << 34) || repeats < 1 || repeats > 100000) {
    std::fprintf(stderr, "adam_cuda_bench: --params must be 1 to 2^34 and --repeats 1 to 100000\n");
    return 2;
  }
  if (!cuda_device_available()) {
    std::fprintf(stderr, "adam_cuda_bench: no CUDA device\n");
    return 1;
  }
  for (HalfFormat format : {HalfFormat::bf16, HalfFormat::fp16}) {
    double s = 0;
    try {
      s = adam_step_cuda_resident_seconds(format, params, repeats);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "adam_cuda_bench: %s\n", e.what());
      return 1;
    }
    std::printf("{\"kernel\": \"luwusim adam_cuda\", \"format\": \"%s\", \"params\": %zu, \"seconds_per_step\": %.9g, "
                "\"params_per_s\": %.6g, \"bytes_per_s\": %.6g}\n",
                format == HalfFormat::bf16 ? "bf16" : "fp16", params, s, params / s, 28.0 * params / s);
  }
  return 0;
}
