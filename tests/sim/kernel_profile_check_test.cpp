// A measured kernel profile against the scenario's GPU (sim/experiment/kernel_profile_check.hpp):
// the GPU named in the profile, its times scaled only when allowed, and no kernel faster than the
// GPU's peak.
#include <doctest/doctest.h>

#include <functional>
#include <optional>
#include <string>

#include "common/input_error.hpp"
#include "models/profile.hpp"
#include "sim/experiment/kernel_profile_check.hpp"
#include "sim/experiment/scenario.hpp"

using namespace luwu;

namespace {

void check_identity(const std::string& name, const std::string& product, const std::string& memory, const std::string& form) {
  CAPTURE(name);
  const sim::GpuIdentity id = sim::identify_gpu(name);
  CHECK(id.product == product);
  CHECK(id.memory == memory);
  CHECK(id.form == form);
}

const std::string kExample = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/traces/kineto-format-example.json";

// The toy model the shipped format example is of, on `gpu`, its kernels timed by `profile`.
sim::Scenario toy(const std::string& gpu, const std::string& profile = kExample, bool other_gpu = false) {
  Json j = {{"name", "toy"},
            {"model", {{"name", "tiny-gpt"}, {"layers", 2}, {"hidden", 256}, {"heads", 4}, {"vocab", 1024}, {"max_seq", 512}}},
            {"training", {{"micro_batch", 2}, {"seq_len", 256}, {"memory_efficient_attention", true}, {"dtype", "fp16"}}},
            {"cluster", {{"topology", "luwu-star"}, {"workers", 2}, {"profiles", {{"gpu", gpu}}}}},
            {"systems", {"ddp"}},
            {"kernel_times", profile}};
  if (other_gpu) j["kernel_times_other_gpu"] = true;
  return sim::scenario_from_json(JsonNode(j, "toy.json"));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("GPU names as profiles and luwusim write them") {
  check_identity("NVIDIA A100-SXM4-40GB", "a100", "40gb", "sxm");
  check_identity("a100-40gb-sxm", "a100", "40gb", "sxm");
  check_identity("NVIDIA A100-PCIE-40GB", "a100", "40gb", "pcie");
  check_identity("NVIDIA H800", "h800", "", "");
  check_identity("NVIDIA H100 80GB HBM3", "h100", "80gb", "");
  check_identity("Tesla V100-SXM2-32GB", "v100", "32gb", "sxm");
  check_identity("AMD Instinct MI250X", "mi250x", "", "");
  check_identity("NVIDIA GH200 480GB", "gh200", "480gb", "");
  CHECK(sim::gpu_difference(sim::identify_gpu("NVIDIA A100-SXM4-40GB"), sim::identify_gpu("a100-40gb-sxm")).empty());
  CHECK(sim::gpu_difference(sim::identify_gpu("NVIDIA A100 80GB"), sim::identify_gpu("a100-40gb-sxm")) == "memory 80gb against 40gb");
  CHECK(sim::gpu_difference(sim::identify_gpu("NVIDIA H800"), sim::identify_gpu("a100-40gb-sxm")) == "product h800 against a100");
  CHECK(sim::gpu_difference(sim::identify_gpu("NVIDIA A100-PCIE-40GB"), sim::identify_gpu("a100-40gb-sxm")) ==
        "form factor pcie against sxm");
}

TEST_CASE("a profile of another GPU is refused, or scaled by the two GPUs' peaks when allowed") {
  // The format example ran on an A100-SXM4-40GB; the scenario's GPU is an H100.
  const sim::Scenario on_other = toy("h100-80gb-sxm");
  const std::string refused = error_of([&] { sim::scenario_trace(on_other); });
  CHECK(refused.find("kineto-format-example.json: at $.deviceProperties:") != std::string::npos);
  CHECK(refused.find("ran on a NVIDIA A100-SXM4-40GB, the scenario's GPU is h100-80gb-sxm (product a100 against h100)") !=
        std::string::npos);
  CHECK(refused.find("--allow-other-gpu") != std::string::npos);

  // Allowed: each time x the A100's peak over the H100's (fp16 FLOP/s for GEMMs), from their profiles.
  const sim::Scenario same = toy("a100-40gb-sxm");
  const sim::Scenario scaled = toy("h100-80gb-sxm", kExample, true);
  std::optional<workloads::KernelTimesReport> report;
  const workloads::Trace on_a100 = sim::scenario_trace(same), on_h100 = sim::scenario_trace(scaled, &report);
  const auto a100 = models::gpu_from_profile(models::find_profile("a100-40gb-sxm"));
  const auto h100 = models::gpu_from_profile(models::find_profile("h100-80gb-sxm"));
  const double ratio = a100.peak_fp16_flops / h100.peak_fp16_flops;
  int gemms = 0;
  for (std::size_t l = 0; l < on_a100.kernel_lists.size(); ++l)
    for (std::size_t k = 0; k < on_a100.kernel_lists[l].size(); ++k)
      if (on_a100.kernel_lists[l][k].kind == workloads::KernelKind::Gemm) {
        ++gemms;
        CHECK(on_h100.kernel_lists[l][k].measured_s == doctest::Approx(on_a100.kernel_lists[l][k].measured_s * ratio));
      }
  CHECK(gemms > 0);
  REQUIRE(report);
  CHECK(report->scaled_from.find("scaled from NVIDIA A100-SXM4-40GB (a100-40gb-sxm)") != std::string::npos);
  // The same GPU's profile is taken as it is.
  CHECK(error_of([&] { sim::scenario_trace(same); }).empty());
}

TEST_CASE("a measured time faster than the GPU's peak is refused with the kernel's name and time") {
  // The toy's profile on a 12-block, 4x wider model: its GEMMs' times spread over far more FLOPs.
  Json j = {{"name", "big"},
            {"model", "gpt3-1.3b"},
            {"training", {{"micro_batch", 2}, {"seq_len", 256}, {"memory_efficient_attention", true}, {"dtype", "fp16"}}},
            {"cluster", {{"topology", "luwu-star"}, {"workers", 2}}},
            {"systems", {"ddp"}},
            {"kernel_times", kExample}};
  const sim::Scenario big = sim::scenario_from_json(JsonNode(j, "big.json"));
  const std::string what = error_of([&] { sim::scenario_trace(big); });
  CHECK(what.find("kineto-format-example.json: at $.traceEvents: the profile times the trace's kernel") != std::string::npos);
  CHECK(what.find("TFLOP/s, above the a100-40gb-sxm's peak of 312 TFLOP/s") != std::string::npos);
}
