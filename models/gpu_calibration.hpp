#pragma once
// Fitting a GPU profile's matmul ceiling (gemm_efficiency_max, models/gpu.hpp) to measured GEMM
// rates, as mamf-finder measures them (one GEMM shape at a time, FLOP/s): for each shape the GEMM
// model predicts max(F / (peak x e), B / achieved HBM) / waves, so a shape the HBM term does not
// bind measures e = F / (peak x measured time x waves).  The fitted ceiling is the largest of
// those, as the profiles' is the maximum achievable rate; the shapes HBM binds are reported, not
// fitted.  luwusim calibrate-gpu writes the fitted profile.
#include <algorithm>
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

struct GemmFitRow {
  GemmMeasurement measured;
  bool memory_bound = false;  // the model's HBM term alone takes at least the measured time
  double efficiency = 0;      // what this shape measures of the ceiling (0 when memory-bound)
  double before_flops_per_s = 0;  // the profile's prediction before the fit
  double after_flops_per_s = 0;   // and after
};

struct GemmFit {
  double gemm_efficiency_max = 0;  // fitted
  double previous = 0;             // the profile's
  std::size_t fitted_shapes = 0;   // shapes the HBM term does not bind
  std::vector<GemmFitRow> rows;
};

// std::invalid_argument naming the measurement's origin when a rate is not positive, beats the
// peak or, over its wave factor, implies a ceiling above it; or when no shape is compute-bound.
inline GemmFit fit_gemm_ceiling(const GpuSpec& gpu, const std::vector<GemmMeasurement>& measured, Precision p) {
  GemmFit fit;
  fit.previous = gpu.gemm_efficiency_max;
  const double peak = gpu.peak_flops(p);
  for (const auto& g : measured) {
    if (!(g.m >= 1 && g.n >= 1 && g.k >= 1)) throw std::invalid_argument(g.origin + ": m, n and k must be at least 1");
    if (!(g.flops_per_s > 0)) throw std::invalid_argument(g.origin + ": the rate must be positive");
    if (g.flops_per_s > peak)
      throw std::invalid_argument(g.origin + ": " + std::to_string(g.flops_per_s / 1e12) + " TFLOP/s is above " +
                                  gpu.name + "'s " + to_string(p) + " peak of " + std::to_string(peak / 1e12));
    const double flops = 2 * g.m * g.n * g.k;
    const double tiles = gpu.gemm_tiles(g.m, g.n);
    const double waves = gpu.wave_efficiency(tiles);
    const double measured_s = flops / g.flops_per_s;
    const double memory_s = gpu.gemm_hbm_time_s(g.m, g.n, g.k, p);
    GemmFitRow row{g, measured_s * waves <= memory_s, 0, flops / gpu.gemm_time_s(g.m, g.n, g.k, p), 0};
    if (!row.memory_bound) {
      row.efficiency = flops / (peak * measured_s * waves);
      if (row.efficiency > 1)
        throw std::invalid_argument(g.origin + ": the rate over its " + std::to_string(tiles) + " tiles' wave factor " +
                                    std::to_string(waves) + " is above peak: the kernel used other tiles than the "
                                    "profile's kernel_tile; leave the shape out or set kernel_tile");
      fit.gemm_efficiency_max = std::max(fit.gemm_efficiency_max, row.efficiency);
      ++fit.fitted_shapes;
    }
    fit.rows.push_back(row);
  }
  if (fit.fitted_shapes == 0)
    throw std::invalid_argument("no measured shape is compute-bound under the profile's HBM rate: nothing to fit the "
                                "matmul ceiling to (measure larger GEMMs)");
  GpuSpec fitted = gpu;
  fitted.gemm_efficiency_max = fit.gemm_efficiency_max;
  for (auto& row : fit.rows) {
    const auto& g = row.measured;
    row.after_flops_per_s = 2 * g.m * g.n * g.k / fitted.gemm_time_s(g.m, g.n, g.k, p);
  }
  return fit;
}

}  // namespace luwu::models
