// The CUDA step gives the CPU kernel's bits; skipped (with a message) without CUDA or a GPU.
#include <doctest/doctest.h>

#include <cstring>

#include "tests/validation/adam_test_data.hpp"

#ifdef LUWUSIM_HAVE_CUDA
#include "validation/adam_cuda.hpp"
#endif

using namespace luwu::validation;
using namespace luwu::validation::testing;

TEST_CASE("the CUDA step gives the CPU kernel's bits") {
#ifndef LUWUSIM_HAVE_CUDA
  MESSAGE("built without LUWUSIM_CUDA: skipped");
#else
  if (!cuda_device_available()) {
    MESSAGE("no CUDA device: skipped");
    return;
  }
  for (HalfFormat format : {HalfFormat::fp16, HalfFormat::bf16}) {
    AdamHyperparameters h;
    h.weight_decay = 0.01;
    h.weight_decay_mode = WeightDecayMode::decoupled;
    OptimizerState cpu = random_state(10007, 5), gpu = cpu;
    std::mt19937_64 rng(9);
    for (int step = 1; step <= 10; ++step) {
      const auto grads = random_gradients(10007, format, rng);
      const AdamStepScalars s = AdamStepScalars::for_step(h, step);
      adam_step_scalar(s, format, slice_of(cpu, grads));
      adam_step_cuda(s, format, slice_of(gpu, grads));
    }
    CHECK(std::memcmp(cpu.master.data(), gpu.master.data(), cpu.master.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(cpu.m.data(), gpu.m.data(), cpu.m.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(cpu.v.data(), gpu.v.data(), cpu.v.size() * sizeof(float)) == 0);
    CHECK(cpu.params_out == gpu.params_out);
  }
#endif
}
