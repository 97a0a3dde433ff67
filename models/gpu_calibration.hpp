#pragma once
// Fitting a GPU profile's GEMM model (models/gpu.hpp) to measured GEMM rates, one shape at a time
// (mamf-finder, bench/gpu_rates.py).  The model predicts max(F / (peak x e), B / achieved HBM) /
// waves, so a shape the HBM term does not bind measures e = F / (peak x measured time x waves).
// The fitted ceiling is the median of those (the rate a typical large GEMM reaches, which a
// training step's GEMMs see) or, with FitStatistic::max, the largest (mamf-finder's "maximum
// achievable").  The fit is made twice, with the profile's wave quantization and without it, and
// keeps the one whose predictions are nearer the measurements (the mean of |model / measured - 1|):
// on an A100 the waves of 128 x 128 tiles show in the rates, on an H100 they do not.  Shapes HBM
// binds, and shapes of fewer tiles than SMs (their rate is the host's launch rate or the kernel's
// latency, which the model does not hold), are reported, not fitted.  luwusim calibrate-gpu writes
// the fitted profile.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/gpu.hpp"

namespace luwu::models {

struct GemmMeasurement {
  double m = 0, n = 0, k = 0;
  double flops_per_s = 0;  // measured
  std::string origin;      // "file line N", for messages
};

enum class FitStatistic { median, max };

struct GemmFitRow {
  GemmMeasurement measured;
  bool memory_bound = false;      // under the kept fit, the model's HBM term alone takes at least the measured time
  bool sub_wave = false;          // fewer tiles than SMs: not fitted
  double efficiency = 0;          // what this shape measures of the ceiling (0 when memory-bound)
  double before_flops_per_s = 0;  // the profile's prediction before the fit
  double after_flops_per_s = 0;   // and after
};

struct GemmFit {
  double gemm_efficiency_max = 0;     // fitted
  double previous = 0;                // the profile's
  bool wave_quantization = true;      // kept
  bool previous_wave_quantization = true;
  FitStatistic statistic = FitStatistic::median;
  std::size_t fitted_shapes = 0;      // shapes the HBM term does not bind
  double mean_abs_error_waves = 0;    // mean |model / measured - 1| over the fitted shapes, with waves
  double mean_abs_error_no_waves = 0; // and without
  std::vector<GemmFitRow> rows;
};

namespace detail {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct WaveVariantFit {
  double efficiency = 0;
  std::size_t fitted = 0;
  double mean_abs_error = 0;
  std::vector<GemmFitRow> rows;
};

inline WaveVariantFit fit_variant(const GpuSpec& gpu, const std::vector<GemmMeasurement>& measured, Precision p,
                                  FitStatistic statistic, bool waves_on) {
  GpuSpec variant = gpu;
  variant.gemm_wave_quantization = waves_on;
  const double peak = gpu.peak_flops(p);
  WaveVariantFit out;
  std::vector<double> shares;
  for (const auto& g : measured) {
    const double flops = 2 * g.m * g.n * g.k;
    const double tiles = gpu.gemm_tiles(g.m, g.n);
    const double waves = waves_on ? gpu.wave_efficiency(tiles) : 1.0;
    const double measured_s = flops / g.flops_per_s;
    GemmFitRow row{g, measured_s * waves <= variant.gemm_hbm_time_s(g.m, g.n, g.k, p), gpu.sm_count > 0 && tiles < gpu.sm_count,
                   0, flops / gpu.gemm_time_s(g.m, g.n, g.k, p), 0};
    if (!row.memory_bound && !row.sub_wave) {
      row.efficiency = flops / (peak * measured_s * waves);
      shares.push_back(row.efficiency);
    }
    out.rows.push_back(row);
  }
  out.fitted = shares.size();
  if (shares.empty()) return out;
  out.efficiency = statistic == FitStatistic::max ? *std::max_element(shares.begin(), shares.end()) : median(shares);
  variant.gemm_efficiency_max = std::min(out.efficiency, 1.0);
  double error = 0;
  for (auto& row : out.rows) {
    const auto& g = row.measured;
    row.after_flops_per_s = 2 * g.m * g.n * g.k / variant.gemm_time_s(g.m, g.n, g.k, p);
    if (!row.memory_bound && !row.sub_wave) error += std::abs(row.after_flops_per_s / g.flops_per_s - 1);
  }
  out.mean_abs_error = error / static_cast<double>(out.fitted);
  return out;
}

}  // namespace detail

// std::invalid_argument naming the measurement's origin when a rate is not positive or beats the
// peak; or when no shape is compute-bound.
inline GemmFit fit_gemm_ceiling(const GpuSpec& gpu, const std::vector<GemmMeasurement>& measured, Precision p,
                                FitStatistic statistic = FitStatistic::median) {
  const double peak = gpu.peak_flops(p);
  for (const auto& g : measured) {
    if (!(g.m >= 1 && g.n >= 1 && g.k >= 1)) throw std::invalid_argument(g.origin + ": m, n and k must be at least 1");
    if (!(g.flops_per_s > 0)) throw std::invalid_argument(g.origin + ": the rate must be positive");
    if (g.flops_per_s > peak)
      throw std::invalid_argument(g.origin + ": " + std::to_string(g.flops_per_s / 1e12) + " TFLOP/s is above " +
                                  gpu.name + "'s " + to_string(p) + " peak of " + std::to_string(peak / 1e12));
  }
  const auto with = detail::fit_variant(gpu, measured, p, statistic, true);
  const auto without = detail::fit_variant(gpu, measured, p, statistic, false);
  if (without.fitted == 0)
    throw std::invalid_argument("no measured shape is compute-bound under the profile's HBM rate and fills the GPU's "
                                "SMs once: nothing to fit the matmul ceiling to (measure larger GEMMs)");
  // Waves are kept only where they fit at least as well and imply no share above peak.
  const bool keep_waves = with.fitted > 0 && with.efficiency <= 1 && with.mean_abs_error <= without.mean_abs_error;
  const auto& kept = keep_waves ? with : without;
  GemmFit fit;
  fit.previous = gpu.gemm_efficiency_max;
  fit.previous_wave_quantization = gpu.gemm_wave_quantization;
  fit.statistic = statistic;
  fit.wave_quantization = keep_waves;
  fit.gemm_efficiency_max = kept.efficiency;
  fit.fitted_shapes = kept.fitted;
  fit.mean_abs_error_waves = with.fitted > 0 ? with.mean_abs_error : 0;
  fit.mean_abs_error_no_waves = without.mean_abs_error;
  fit.rows = kept.rows;
  return fit;
}

// Fitting the profile's HBM shares to measured kernels, each counted in the workload's bytes
// (workloads/kernels.hpp) so that the simulator gives it back its measured time: hbm_efficiency is
// a device copy's rate (bytes read plus written, bench/gpu_rates.py's rates.json) over the datasheet
// bandwidth; row_reduction_hbm_efficiency the median share its layer norms and softmaxes reach;
// broadcast_hbm_efficiency the median share of kernels with a broadcast operand (bench/gpu_block.py's
// profiled masked fills: PyTorch's non-vectorized elementwise kernel).
struct KernelMeasurement {
  std::string name;
  double bytes = 0;    // as the workload counts the kernel's traffic
  double seconds = 0;  // measured
  std::string origin;  // for messages
};

namespace detail {

// Bytes/s over the datasheet bandwidth; std::invalid_argument naming the origin when the rate is
// not positive or beats the datasheet (a working set in L2 measures the cache, not HBM).
inline double hbm_share(const GpuSpec& gpu, double Bps, const std::string& origin) {
  if (!(Bps > 0) || !std::isfinite(Bps)) throw std::invalid_argument(origin + ": the rate must be positive");
  const double s = Bps / gpu.hbm_Bps;
  if (s > 1)
    throw std::invalid_argument(origin + ": " + std::to_string(Bps / 1e12) + " TB/s is above " + gpu.name +
                                "'s HBM bandwidth of " + std::to_string(gpu.hbm_Bps / 1e12) +
                                " TB/s: a working set that fits in cache measures the cache");
  return s;
}

// The median, least and largest share of measured kernels; std::invalid_argument when there is none.
struct ShareFit {
  double median = 0, min = 0, max = 0;
  std::size_t count = 0;
};
inline ShareFit fit_shares(const GpuSpec& gpu, const std::vector<KernelMeasurement>& kernels, const std::string& none) {
  if (kernels.empty()) throw std::invalid_argument(none);
  std::vector<double> shares;
  for (const auto& k : kernels) {
    if (!(k.seconds > 0)) throw std::invalid_argument(k.origin + ": the time must be positive");
    shares.push_back(hbm_share(gpu, k.bytes / k.seconds, k.origin));
  }
  return {median(shares), *std::min_element(shares.begin(), shares.end()),
          *std::max_element(shares.begin(), shares.end()), shares.size()};
}

}  // namespace detail

struct HbmFit {
  double hbm_efficiency = 0;
  double row_reduction_hbm_efficiency = 0;
  std::size_t reductions = 0;
  double reduction_share_min = 0, reduction_share_max = 0;
};

// std::invalid_argument naming the origin when a rate is not positive or beats the datasheet
// bandwidth, or when no reduction is given.
inline HbmFit fit_hbm_rates(const GpuSpec& gpu, double copy_Bps, const std::string& copy_origin,
                            const std::vector<KernelMeasurement>& reductions) {
  const detail::ShareFit r =
      detail::fit_shares(gpu, reductions, "no layer norm or softmax measured: nothing to fit the row-reduction share to");
  HbmFit fit;
  fit.hbm_efficiency = detail::hbm_share(gpu, copy_Bps, copy_origin);
  fit.row_reduction_hbm_efficiency = r.median;
  fit.reductions = r.count;
  fit.reduction_share_min = r.min;
  fit.reduction_share_max = r.max;
  return fit;
}

struct BroadcastFit {
  double broadcast_hbm_efficiency = 0;
  std::size_t kernels = 0;
  double share_min = 0, share_max = 0;
};

// std::invalid_argument naming the origin, as fit_hbm_rates, or when no kernel is given.
inline BroadcastFit fit_broadcast_rate(const GpuSpec& gpu, const std::vector<KernelMeasurement>& kernels) {
  const detail::ShareFit b =
      detail::fit_shares(gpu, kernels, "no kernel with a broadcast operand measured: nothing to fit");
  return {b.median, b.count, b.min, b.max};
}

}  // namespace luwu::models
