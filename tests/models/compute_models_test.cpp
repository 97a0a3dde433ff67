// GPU efficiency and timing, optimizer step costs: closed forms and published anchors.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "common/csv.hpp"
#include "common/json_input.hpp"
#include "models/gpu_calibration.hpp"
#include "models/models.hpp"

using namespace luwu::models;

namespace {
GpuSpec simple_gpu() {
  GpuSpec g;
  g.name = "test";
  g.peak_fp16_flops = 300e12;
  g.peak_bf16_flops = 0;  // unsupported
  g.peak_fp32_flops = 20e12;
  g.hbm_bytes = 40e9;
  g.hbm_Bps = 1.5e12;
  g.hbm_efficiency = 0.8;  // 1.2e12 B/s achieved
  g.gemm_efficiency_max = 0.8;  // 240e12 FLOP/s ceiling
  g.sm_count = 100;
  g.kernel_tile_elements = 128;
  return g;
}
// A GPU profile against the bf16 GEMM sweep measured in validation/measured/<run>/gemm.csv
// (columns m, n, k, dtype, tflops), over the shapes that fill its SMs once (smaller ones are
// launch-bound: not what the model holds): model rate / measured rate per shape.
struct SweepFit {
  std::size_t shapes = 0;
  double mean_abs_error = 0;
  double median_ratio = 0;
};

SweepFit against_sweep(const GpuSpec& gpu, const std::string& run) {
  const auto records = luwu::read_csv_file(std::string(LUWUSIM_SOURCE_DIR) + "/validation/measured/" + run + "/gemm.csv");
  std::vector<double> ratios;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& f = records[r].fields;
    if (f[3] != "bf16") continue;
    const double m = std::stod(f[0]), n = std::stod(f[1]), k = std::stod(f[2]);
    if (gpu.gemm_tiles(m, n) < gpu.sm_count) continue;
    ratios.push_back(2 * m * n * k / gpu.gemm_time_s(m, n, k, Precision::Bf16) / (std::stod(f[4]) * 1e12));
  }
  SweepFit fit;
  fit.shapes = ratios.size();
  if (ratios.empty()) return fit;
  for (double x : ratios) fit.mean_abs_error += std::abs(x - 1) / static_cast<double>(ratios.size());
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  fit.median_ratio = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  return fit;
}
}  // namespace

TEST_CASE("GEMM model: the measured ceiling, the HBM roofline, and wave quantization") {
  GpuSpec g = simple_gpu();
  // 1280 x 1280 x 12800: 10 x 10 = 100 tiles, one full wave; F = 2 x 1280^2 x 12800 = 4.194e13 at 240e12
  // = 0.17476 s; B = 2 (1280 x 12800 x 2 + 1280^2) = 6.88e7 B at 1.2e12 = 57 us: math-limited, at the ceiling.
  CHECK(g.gemm_time_s(1280, 1280, 12800, Precision::Fp16) == doctest::Approx(2.0 * 1280 * 1280 * 12800 / 240e12));
  CHECK(g.gemm_efficiency(1280, 1280, 12800) == doctest::Approx(0.8));
  // One more row of tiles: 11 x 10 = 110 tiles need 2 waves of 100 SMs, 110 / 200 = 0.55 of them busy.
  const double f = 2.0 * 1408 * 1280 * 12800;
  CHECK(g.gemm_time_s(1408, 1280, 12800, Precision::Fp16) == doctest::Approx(f / 240e12 / 0.55));
  CHECK(g.wave_efficiency(110) == doctest::Approx(0.55));
  CHECK(g.wave_efficiency(100) == doctest::Approx(1.0));
  CHECK(g.wave_efficiency(1) == doctest::Approx(0.01));
  // A skinny GEMM is memory-limited: 12800 x 12800 x 16 moves 2 (2 x 12800 x 16 + 12800^2) = 3.285e8 B at
  // 1.2e12 = 273.7 us, its 5.24e12 FLOPs take 21.8 us at the ceiling; 100 x 100 tiles fill 100 waves.
  const double bytes = 2.0 * (2 * 12800 * 16 + 12800.0 * 12800);
  CHECK(g.gemm_time_s(12800, 12800, 16, Precision::Fp16) == doctest::Approx(bytes / 1.2e12));
  // fp32 moves 4 B per element and runs at the fp32 peak.
  CHECK(g.gemm_time_s(1280, 1280, 12800, Precision::Fp32) == doctest::Approx(2.0 * 1280 * 1280 * 12800 / (20e12 * 0.8)));
  // A batched GEMM counts every GEMM's tiles: 50 GEMMs of 2 x 1 tiles fill one wave.
  CHECK(g.gemm_time_s(256, 128, 12800, Precision::Fp16, 50) ==
        doctest::Approx(std::max(2.0 * 50 * 256 * 128 * 12800 / 240e12, 2.0 * 50 * (256 * 12800 + 12800 * 128 + 256 * 128) / 1.2e12)));
  CHECK_THROWS_AS(g.gemm_time_s(0, 1, 1, Precision::Fp16), std::invalid_argument);
  // Without an SM count there is no wave quantization.
  g.sm_count = 0;
  CHECK(g.gemm_time_s(1408, 1280, 12800, Precision::Fp16) == doctest::Approx(f / 240e12));
}

TEST_CASE("compute and roofline times") {
  GpuSpec g = simple_gpu();
  // Roofline at the achieved HBM rate (1.2e12): 1e12 FLOPs fp16 -> 3.33 ms compute; 3e9 B -> 2.5 ms.
  CHECK(g.roofline_time_s(1e12, 3e9, Precision::Fp16) == doctest::Approx(1e12 / 300e12));
  // 1e12 FLOPs fp32 -> 50 ms; 3e9 B -> 2.5 ms.  An elementwise op: 1e9 FLOPs, 12e9 B -> 10 ms memory-bound.
  CHECK(g.roofline_time_s(1e12, 3e9, Precision::Fp32) == doctest::Approx(0.05));
  CHECK(g.roofline_time_s(1e9, 12e9, Precision::Fp16) == doctest::Approx(12e9 / 1.2e12));
  // A fused attention kernel: the matrix ceiling or HBM, no waves.
  CHECK(g.matrix_kernel_time_s(4.8e12, 1e9, Precision::Fp16) == doctest::Approx(4.8e12 / 240e12));
  CHECK(g.matrix_kernel_time_s(4.8e9, 1e9, Precision::Fp16) == doctest::Approx(1e9 / 1.2e12));
  CHECK_THROWS_AS(g.peak_flops(Precision::Bf16), std::invalid_argument);
  // Interference stretches a duration by 1 / (1 - share).
  CHECK(GpuSpec::slowed_time_s(1.0, 0.2) == doctest::Approx(1.25));
}

// The shipped profiles give back the rates they cite: a large GEMM on random data (the A100 SXM,
// Horace He's 8192^3), mamf-finder's best shape (the A100 80 GB PCIe) and the project's own H100
// shape sweep (validation/measured/h100-sxm-2026-11-27/gemm.csv).
TEST_CASE("A100 and H100 profiles reproduce the measured matmul rates they cite") {
  GpuSpec pcie = gpu_from_profile(find_profile("a100-40gb-pcie"));
  GpuSpec pcie80 = gpu_from_profile(find_profile("a100-80gb-pcie"));
  GpuSpec sxm = gpu_from_profile(find_profile("a100-40gb-sxm"));
  GpuSpec h100 = gpu_from_profile(find_profile("h100-80gb-sxm"));
  auto rate = [](const GpuSpec& g, double m, double n, double k) {
    return 2 * m * n * k / g.gemm_time_s(m, n, k, Precision::Bf16);
  };
  CHECK(rate(pcie80, 2048, 5120, 6144) == doctest::Approx(252.9e12).epsilon(0.001));
  CHECK(rate(sxm, 8192, 8192, 8192) == doctest::Approx(257e12).epsilon(0.001));
  // The 250 W PCIe card at NVIDIA's 90% of the SXM4 part, at the SXM's measured shape.
  CHECK(rate(pcie, 8192, 8192, 8192) == doctest::Approx(0.90 * 257e12).epsilon(0.001));
  // No shape beats the measured maximum by more than the best shape's own wave loss (1.25%).
  for (double d : {1024.0, 4096.0, 12288.0, 16384.0}) CHECK(rate(pcie80, d, d, d) <= 252.9e12 / 0.9877 * 1.0001);
  // A GPT-3 175B layer GEMM (16 x 1024 tokens by 12288 x 12288) is math-limited and within 1% of the ceiling.
  CHECK(pcie.gemm_efficiency(16384, 12288, 12288, Precision::Bf16) > 0.99 * pcie.gemm_efficiency_max);
  // A small GEMM is memory-limited or leaves SMs idle: 256^3 is 4 tiles on 108 SMs.
  CHECK(pcie.gemm_efficiency(256, 256, 256, Precision::Bf16) < 0.05);
  // Streaming kernels reach 88% of HBM (NVIDIA forum thread 339083).
  CHECK(pcie.achieved_hbm_Bps() == doctest::Approx(0.88 * 1555e9));
  // DMA by a SmartNIC must interfere less than a collective kernel.
  CHECK(pcie.dma_interference < pcie.collective_interference);

  // The H100 against its measured sweep: over the bf16 shapes that fill its 132 SMs once, the
  // model's rate is the measured one within 4.5% on average and the measurements' median is the
  // model's (half above, half below); no wave loss (the sweep shows none).
  CHECK_FALSE(h100.gemm_wave_quantization);
  CHECK(rate(h100, 2048, 1152, 8192) == doctest::Approx(rate(h100, 2048, 1536, 8192)));
  CHECK(h100.achieved_hbm_Bps() == doctest::Approx(3.026e12).epsilon(0.001));  // the measured copy rate
  const SweepFit fit = against_sweep(h100, "h100-sxm-2026-11-27");
  REQUIRE(fit.shapes == 100);
  CHECK(fit.mean_abs_error < 0.046);
  CHECK(fit.median_ratio == doctest::Approx(1).epsilon(0.002));
}

// The H200 profile against its own sweep of the same day: within 3.5% on average, the median the
// model's, and its HBM shares the measured copy's and the reductions' median.
TEST_CASE("H200 profile reproduces its measured GEMM sweep and HBM rates") {
  GpuSpec h200 = gpu_from_profile(find_profile("h200-141gb-sxm"));
  CHECK_FALSE(h200.gemm_wave_quantization);
  CHECK(h200.achieved_hbm_Bps() == doctest::Approx(4.271e12).epsilon(0.001));
  const SweepFit fit = against_sweep(h200, "h200-2026-11-27");
  REQUIRE(fit.shapes == 100);
  CHECK(fit.mean_abs_error < 0.036);
  CHECK(fit.median_ratio == doctest::Approx(1).epsilon(0.002));
}

TEST_CASE("row reductions go at their own HBM share: closed form, A100 default, the H100's measured kernels") {
  GpuSpec g = simple_gpu();  // 1.5 TB/s, streams at 0.8
  g.row_reduction_hbm_efficiency = 0.4;
  // 1 GB of which 0.4 GB a reduction's: 0.6e9 / 1.2e12 + 0.4e9 / 0.6e12.
  CHECK(g.elementwise_time_s(0, 1e9, 4e8, 0, Precision::Fp16) == doctest::Approx(0.5e-3 + 2.0 / 3 * 1e-3));
  CHECK(g.elementwise_time_s(0, 1e9, 0, 0, Precision::Fp16) == doctest::Approx(g.roofline_time_s(0, 1e9, Precision::Fp16)));
  // A profile without the field: reductions stream like the rest.
  GpuSpec pcie = gpu_from_profile(find_profile("a100-40gb-pcie"));
  CHECK(pcie.row_reduction_hbm_efficiency == pcie.hbm_efficiency);
  // The H100 against the layer norms and softmaxes it was measured on (rates.json), each in the
  // workload's byte count (norm 2 passes forward, 4 backward; softmax 2 and 3): every kernel within
  // 25% of its measured time (0.43 to 0.56 of the bandwidth), their median within 1%.
  GpuSpec h100 = gpu_from_profile(find_profile("h100-80gb-sxm"));
  const auto doc = luwu::load_json_file(std::string(LUWUSIM_SOURCE_DIR) + "/validation/measured/h100-sxm-2026-11-27/rates.json");
  std::vector<double> ratios;
  for (const auto& [shape, kernels] : doc.at("elementwise").items())
    for (const auto& [name, m] : kernels.items()) {
      const double measured_bytes = m.at("bytes").get<double>(), measured_s = m.at("seconds").get<double>();
      double workload_bytes = 0;
      if (name == "layer_norm_fwd" || name == "softmax_fwd" || name == "softmax_bwd") workload_bytes = measured_bytes;
      if (name == "layer_norm_bwd") workload_bytes = measured_bytes * 4 / 3;  // measured as 3 passes
      if (workload_bytes == 0) continue;
      const double predicted = h100.elementwise_time_s(0, workload_bytes, workload_bytes, 0, Precision::Bf16);
      CAPTURE(shape);
      CAPTURE(name);
      CHECK(std::abs(predicted / measured_s - 1) < 0.25);
      ratios.push_back(predicted / measured_s);
    }
  REQUIRE(ratios.size() == 10);
  std::sort(ratios.begin(), ratios.end());
  CHECK((ratios[4] + ratios[5]) / 2 == doctest::Approx(1).epsilon(0.01));
}

TEST_CASE("kernels with a broadcast operand go at their own HBM share: closed form, A100 default") {
  GpuSpec g = simple_gpu();  // 1.5 TB/s, streams at 0.8
  g.row_reduction_hbm_efficiency = 0.4;
  g.broadcast_hbm_efficiency = 0.3;
  // 1 GB: 0.4 GB a reduction's, 0.3 GB broadcast, 0.3 GB streamed:
  // 0.3e9 / 1.2e12 + 0.4e9 / 0.6e12 + 0.3e9 / 0.45e12.
  CHECK(g.elementwise_time_s(0, 1e9, 4e8, 3e8, Precision::Fp16) ==
        doctest::Approx(0.25e-3 + 2.0 / 3 * 1e-3 + 2.0 / 3 * 1e-3));
  // Broadcast alone, with reductions at the streaming rate.
  g.row_reduction_hbm_efficiency = g.hbm_efficiency;
  CHECK(g.elementwise_time_s(0, 1e9, 0, 1e9, Precision::Fp16) == doctest::Approx(1e9 / 0.45e12));
  // The A100s: no measurement cited, so broadcast kernels stream like the rest.
  GpuSpec pcie = gpu_from_profile(find_profile("a100-40gb-pcie"));
  CHECK(pcie.broadcast_hbm_efficiency == pcie.hbm_efficiency);
  CHECK(pcie.elementwise_time_s(0, 1e9, 0, 1e9, Precision::Bf16) == pcie.roofline_time_s(0, 1e9, Precision::Bf16));
  // The H100's is its measured masked fill's median share (block.json).
  CHECK(gpu_from_profile(find_profile("h100-80gb-sxm")).broadcast_hbm_efficiency == doctest::Approx(0.393));
  // calibrate-gpu's fit: kernels at 0.3, 0.4 and 0.6 of 1.5 TB/s, their median; faster than HBM refused.
  const GpuSpec s = simple_gpu();
  const BroadcastFit fit = fit_broadcast_rate(s, {{"a", 1e9, 1e9 / 0.45e12, "a"}, {"b", 1e9, 1e9 / 0.6e12, "b"},
                                                  {"c", 2e9, 2e9 / 0.9e12, "c"}});
  CHECK(fit.broadcast_hbm_efficiency == doctest::Approx(0.4));
  CHECK(fit.kernels == 3);
  CHECK(fit.share_min == doctest::Approx(0.3));
  CHECK(fit.share_max == doctest::Approx(0.6));
  CHECK_THROWS_WITH_AS(fit_broadcast_rate(s, {{"l2", 1e9, 1e9 / 2e12, "in L2"}}), doctest::Contains("in L2"),
                       std::invalid_argument);
  CHECK_THROWS_AS(fit_broadcast_rate(s, {}), std::invalid_argument);
}

TEST_CASE("calibrate-gpu's HBM fit: the copy's share, the reductions' median share, rates above the datasheet refused") {
  GpuSpec g = simple_gpu();  // 1.5 TB/s datasheet
  // Reductions at 0.3, 0.5 and 0.6 of 1.5 TB/s: 1 GB in 1/0.45e12, 1/0.75e12 and 1/0.9e12 s.
  const std::vector<KernelMeasurement> measured = {{"a", 1e9, 1e9 / 0.45e12, "a"},
                                                      {"b", 1e9, 1e9 / 0.75e12, "b"},
                                                      {"c", 2e9, 2e9 / 0.9e12, "c"}};
  const HbmFit fit = fit_hbm_rates(g, 1.35e12, "copy", measured);
  CHECK(fit.hbm_efficiency == doctest::Approx(0.9));
  CHECK(fit.row_reduction_hbm_efficiency == doctest::Approx(0.5));
  CHECK(fit.reductions == 3);
  CHECK(fit.reduction_share_min == doctest::Approx(0.3));
  CHECK(fit.reduction_share_max == doctest::Approx(0.6));
  CHECK_THROWS_WITH_AS(fit_hbm_rates(g, 1.6e12, "the copy", measured), doctest::Contains("the copy"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(fit_hbm_rates(g, 1.35e12, "copy", {{"l2", 1e9, 1e9 / 2e12, "in L2"}}), doctest::Contains("in L2"),
                       std::invalid_argument);
  CHECK_THROWS_AS(fit_hbm_rates(g, 1.35e12, "copy", {}), std::invalid_argument);
}

TEST_CASE("V100 profile: no bf16, and its matmul ceiling is flagged an assumption") {
  GpuSpec v100 = gpu_from_profile(find_profile("v100-32gb-sxm"));
  CHECK(v100.gemm_efficiency_max == doctest::Approx(0.48));
  CHECK(find_profile("v100-32gb-sxm").fields.at("gemm_efficiency_max").assumption);
  CHECK(v100.peak_flops(Precision::Fp16) == doctest::Approx(125e12));
  CHECK_THROWS_AS(v100.peak_flops(Precision::Bf16), std::invalid_argument);
}

TEST_CASE("mixed-precision Adam moves 14 B in and 14 B out per parameter") {
  // Reads: fp16 grad 2 + fp32 master 4 + m 4 + v 4 = 14 B.
  // Writes: fp32 master 4 + m 4 + v 4 + fp16 param copy 2 = 14 B.
  OptimizerCost adam = adam_mixed_precision_cost();
  CHECK(adam.bytes_read_per_param == 2 + 4 + 4 + 4);
  CHECK(adam.bytes_written_per_param == 4 + 4 + 4 + 2);
  // Pure fp32 (DeepSpeed CPU Adam measurement in hardware.md): read p, g, m, v (16), write p, m, v (12) = 28 B.
  OptimizerCost fp32 = adam_mixed_precision_cost({4, 4, 0});
  CHECK(fp32.bytes_read_per_param + fp32.bytes_written_per_param == 28);
  // AdamW costs more FLOPs, not more bytes.
  OptimizerCost adamw = adam_mixed_precision_cost({}, true);
  CHECK(adamw.flops_per_param > adam.flops_per_param);
  CHECK(adamw.bytes_read_per_param == adam.bytes_read_per_param);
}

TEST_CASE("SGD with momentum moves 10 B in and 10 B out per parameter") {
  // Reads: fp16 grad 2 + fp32 master 4 + momentum 4; writes: master 4 + momentum 4 + fp16 param 2.
  OptimizerCost sgd = sgd_momentum_cost();
  CHECK(sgd.bytes_read_per_param == 10);
  CHECK(sgd.bytes_written_per_param == 10);
  CHECK(sgd.flops_per_param < adam_mixed_precision_cost().flops_per_param);
}

TEST_CASE("an optimizer update is bounded by the slower of memory streaming and compute") {
  OptimizerCost adam = adam_mixed_precision_cost();
  // 1e9 params in DRAM at 100 GB/s both ways: 1e9 * 28 / 100e9 = 0.28 s; compute at 1 TFLOP/s:
  // 1e9 * flops_per_param / 1e12 s, well below -> memory-bound.
  CHECK(optimizer_update_time_s(1e9, adam, 100e9, 100e9, 1e12) == doctest::Approx(0.28));
  // State on 4 striped PM1733 (read 28 GB/s, write 15.2 GB/s): 1e9 * (14/28e9 + 14/15.2e9) = 1.42105 s.
  CHECK(optimizer_update_time_s(1e9, adam, 28e9, 15.2e9, 1e12) == doctest::Approx(14.0 / 28 + 14.0 / 15.2));
  // A slow processor makes it compute-bound: 1e9 * F / 1e9 FLOP/s = F s.
  CHECK(optimizer_update_time_s(1e9, adam, 1e12, 1e12, 1e9) == doctest::Approx(adam.flops_per_param));
  // The hardware.md measurement: fp32 CPU Adam at 45 GB/s streams 28 B/param -> 1.6e9 params/s.
  OptimizerCost fp32 = adam_mixed_precision_cost({4, 4, 0});
  CHECK(1.0 / optimizer_update_time_s(1, fp32, 45e9, 45e9, 1e15) == doctest::Approx(45e9 / 28));
  CHECK_THROWS_AS(optimizer_update_time_s(1, adam, 0, 1, 1), std::invalid_argument);
}

TEST_CASE("Adam's persistent state is 12 B/param, SGD-momentum's 8 B/param") {
  CHECK(adam_mixed_precision_cost().state_bytes_per_param == 12);  // fp32 master + m + v
  CHECK(sgd_momentum_cost().state_bytes_per_param == 8);           // fp32 master + momentum
}

TEST_CASE("out-of-core optimizer step: the slowest tier bounds it") {
  using luwu::models::HostSpec;
  HostSpec h;
  h.name = "test-host";
  h.cpu = CpuSpec{64, 300e9, 5e12};
  h.dram = MemorySpec{512e9, 400e9, 0.75, 0};
  h.ssds = SsdArray{SsdSpec{7e9, 3.5e9, 4e12, 0}, 4};  // 28 GB/s read, 14 GB/s write
  h.cxl = MemorySpec{128e9, 32e9, 0.75, 0};            // 24 GB/s
  OptimizerCost adam = adam_mixed_precision_cost();
  const double P = 1e9;

  // All state in DRAM: 28 B/param + 2 B read for ownership of the fp16 copy-out's lines (the
  // default write-allocate share 1) = 30 B over 300 GB/s = 0.1 s; compute 15 FLOP x 1e9 / 5e12 = 3 ms.
  auto dram = cpu_optimizer_step_times(h, P, adam, {1, 0, 0});
  CHECK(dram.dram_s == doctest::Approx(P * 30 / 300e9));
  CHECK(dram.total_s == doctest::Approx(dram.dram_s));
  CHECK(dram.ssd_s == 0);

  // All state on SSD, read and written back at once: 12 GB each way over 28 GB/s reads, 14 GB/s
  // writes and (default) 28 GB/s together: max(0.43, 0.857, 24/28 = 0.857) s; DRAM carries
  // 30 + 24 = 54 B/param (staging in and out) = 0.18 s.  SSD-bound.
  auto ssd = cpu_optimizer_step_times(h, P, adam, {0, 0, 1});
  CHECK(ssd.ssd_s == doctest::Approx(P * 12 / 14e9));
  CHECK(ssd.dram_s == doctest::Approx(P * 54 / 300e9));
  CHECK(ssd.total_s == doctest::Approx(ssd.ssd_s));

  // Half in CXL: CXL 0.5 x 12 x 2 / 24e9 x 1e9 = 0.5 s; DRAM (30 - 12) / 300e9 x 1e9 = 0.06 s.
  auto cxl = cpu_optimizer_step_times(h, P, adam, {0.5, 0.5, 0});
  CHECK(cxl.cxl_s == doctest::Approx(0.5));
  CHECK(cxl.dram_s == doctest::Approx(P * 18 / 300e9));
  CHECK(cxl.total_s == doctest::Approx(0.5));

  CHECK_THROWS_AS(cpu_optimizer_step_times(h, P, adam, {0.5, 0, 0.4}), std::invalid_argument);
  HostSpec bare = h;
  bare.ssds.reset();
  CHECK_THROWS_AS(cpu_optimizer_step_times(bare, P, adam, {0, 0, 1}), std::invalid_argument);
}

TEST_CASE("the paper's worker host: 2 x Xeon Silver 4214, DDR4-2400 x 6 channels per socket") {
  CpuSpec cpu = cpu_from_profile(find_profile("xeon-silver-4214-gen3"));
  CHECK(cpu.cores == 24);
  // 24 cores x 2.2 GHz x (1 AVX-512 FMA unit x 16 fp32 lanes x 2) = 1689.6 GFLOP/s.
  CHECK(cpu.flops == doctest::Approx(1689.6e9).scale(0));
  // 2 sockets x 6 channels x 2400 MT/s x 8 B = 230.4 GB/s; x 0.75 = 172.8 GB/s streamed.
  MemorySpec dram = memory_from_profile(find_profile("xeon-silver-4214-gen3"));
  CHECK(dram.theoretical_Bps == doctest::Approx(230.4e9).scale(0));
  CHECK(cpu.memory_Bps == doctest::Approx(172.8e9).scale(0));
  CHECK(dram.capacity_bytes == 256.0 * (1ull << 30));  // the paper's 256 GB of DIMMs, binary as JEDEC counts memory
}

TEST_CASE("a host assembled from shipped profiles") {
  auto host = find_profile("dual-socket-server-2021");
  auto ssd = find_profile("samsung-pm1733");
  auto cxl = find_profile("cxl-samsung-cmm-d");
  auto h = host_from_profiles(host, &ssd, 8, &cxl);
  REQUIRE(h.ssds);
  CHECK(h.ssds->read_Bps() == doctest::Approx(8 * 7.0e9));
  CHECK(h.cxl->theoretical_Bps == doctest::Approx(32e9));
  CHECK_FALSE(h.gpu);
  CHECK_THROWS_AS(host_from_profiles(ssd), luwu::InputError);  // an SSD is not a host
}

TEST_CASE("calibrate-gpu's fit: the median share, waves kept only where they fit, HBM-bound and sub-wave shapes left out") {
  GpuSpec truth = simple_gpu();
  truth.gemm_efficiency_max = 0.7;
  auto measured = [&](const GpuSpec& g, double m, double n, double k, double scale = 1) {
    return GemmMeasurement{m, n, k, scale * 2 * m * n * k / g.gemm_time_s(m, n, k, Precision::Fp16), "test"};
  };
  // Compute-bound shapes at the true ceiling (one with a partial last wave), a skinny HBM-bound one
  // and one of 4 tiles on 100 SMs (sub-wave).
  const std::vector<GemmMeasurement> rates = {measured(truth, 1280, 1280, 12800), measured(truth, 1408, 1280, 12800),
                                              measured(truth, 12800, 12800, 16), measured(truth, 256, 256, 12800, 0.5)};
  GpuSpec start = simple_gpu();  // ceiling 0.8
  const GemmFit fit = fit_gemm_ceiling(start, rates, Precision::Fp16);
  CHECK(fit.previous == doctest::Approx(0.8));
  CHECK(fit.gemm_efficiency_max == doctest::Approx(0.7).epsilon(1e-12));
  CHECK(fit.wave_quantization);  // the partial wave's loss is in the rates
  CHECK(fit.mean_abs_error_waves == doctest::Approx(0).scale(1));
  CHECK(fit.mean_abs_error_no_waves > 0.1);
  CHECK(fit.fitted_shapes == 2);
  CHECK(fit.rows[2].memory_bound);
  CHECK(fit.rows[3].sub_wave);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(fit.rows[i].after_flops_per_s == doctest::Approx(rates[i].flops_per_s).epsilon(1e-12));
  // Shares 0.6, 0.7 and 0.8 of peak at full waves: the median is 0.7, the max 0.8.
  const std::vector<GemmMeasurement> spread = {measured(truth, 1280, 1280, 12800, 6.0 / 7),
                                               measured(truth, 2560, 2560, 12800),
                                               measured(truth, 1280, 2560, 12800, 8.0 / 7)};
  CHECK(fit_gemm_ceiling(start, spread, Precision::Fp16).gemm_efficiency_max == doctest::Approx(0.7).epsilon(1e-12));
  CHECK(fit_gemm_ceiling(start, spread, Precision::Fp16, FitStatistic::max).gemm_efficiency_max ==
        doctest::Approx(0.8).epsilon(1e-12));
  // Rates with no wave loss (a partial wave as fast as full ones): the waves are dropped, and the
  // fit then gives every shape back.
  GpuSpec flat = truth;
  flat.gemm_wave_quantization = false;
  const std::vector<GemmMeasurement> no_loss = {measured(flat, 1280, 1280, 12800), measured(flat, 1408, 1280, 12800),
                                                measured(flat, 1536, 1280, 12800)};
  const GemmFit dropped = fit_gemm_ceiling(start, no_loss, Precision::Fp16);
  CHECK_FALSE(dropped.wave_quantization);
  CHECK(dropped.gemm_efficiency_max == doctest::Approx(0.7).epsilon(1e-12));
  for (const auto& row : dropped.rows) CHECK(row.after_flops_per_s == doctest::Approx(row.measured.flops_per_s).epsilon(1e-12));
  // A partial wave faster than its wave factor allows (200 TFLOP/s at 0.55 of two waves) is no
  // longer refused: it is the evidence that drops the waves.
  CHECK_FALSE(fit_gemm_ceiling(start, {{1408, 1280, 12800, 200e12, "row 8"}}, Precision::Fp16).wave_quantization);
  // Above peak: refused, naming the row.
  CHECK_THROWS_WITH_AS(fit_gemm_ceiling(start, {{1280, 1280, 12800, 301e12, "row 7"}}, Precision::Fp16),
                       doctest::Contains("row 7"), std::invalid_argument);
  // Nothing compute-bound and one wave: nothing to fit.
  CHECK_THROWS_AS(fit_gemm_ceiling(start, {measured(truth, 12800, 12800, 16)}, Precision::Fp16), std::invalid_argument);
  CHECK_THROWS_AS(fit_gemm_ceiling(start, {measured(truth, 256, 256, 12800)}, Precision::Fp16), std::invalid_argument);
}
