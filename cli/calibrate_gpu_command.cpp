// `luwusim calibrate-gpu --profile GPU --gemm-csv RATES.csv -o OUT.json`: fits a GPU profile's
// matmul ceiling to measured GEMM rates (models/gpu_calibration.hpp) and writes the profile with
// the fitted gemm_efficiency_max, sourced to the file.  The CSV: a header with m, n, k and tflops
// (TFLOP/s, as mamf-finder prints them), one measured shape per line; # comments.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "common/atomic_write.hpp"
#include "common/csv.hpp"
#include "common/json_input.hpp"
#include "models/gpu_calibration.hpp"
#include "models/profile.hpp"
#include "workloads/training_config.hpp"

namespace {

struct CalibrateGpuArgs {
  std::string profile;
  std::string csv;
  std::string output;
  std::string name;
  std::string dtype = "bf16";
  bool json = false;
};

std::vector<luwu::models::GemmMeasurement> read_rates(const std::string& file) {
  const auto records = luwu::read_csv_file(file);
  const auto& header = records.front().fields;
  auto column = [&](const std::string& name) {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    throw luwu::InputError(file, "line " + std::to_string(records.front().line),
                           "the header has no \"" + name + "\" column (expected m, n, k, tflops)");
  };
  const std::size_t cm = column("m"), cn = column("n"), ck = column("k"), ct = column("tflops");
  std::vector<luwu::models::GemmMeasurement> out;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& rec = records[r];
    const std::string where = "line " + std::to_string(rec.line);
    auto number = [&](std::size_t c) {
      const std::string& text = rec.fields[c];
      std::size_t end = 0;
      double v = 0;
      try {
        v = std::stod(text, &end);
      } catch (const std::exception&) {
        end = 0;
      }
      if (end == 0 || end != text.size() || !std::isfinite(v) || !(v > 0))
        throw luwu::InputError(file, where, header[c] + ": expected a positive number, found \"" + text + "\"");
      return v;
    };
    out.push_back({number(cm), number(cn), number(ck), number(ct) * 1e12, file + " " + where});
    if (out.back().m > 1e9 || out.back().n > 1e9 || out.back().k > 1e9)
      throw luwu::InputError(file, where, "a GEMM dimension above 1e9 is not a measurement");
  }
  if (out.empty()) throw luwu::InputError(file, "", "no measured shape after the header");
  return out;
}

int run_calibrate_gpu(const CalibrateGpuArgs& a) {
  const luwu::models::Profile base = luwu::models::find_profile(a.profile);
  const luwu::models::GpuSpec gpu = luwu::models::gpu_from_profile(base);
  const auto dtype = luwu::workloads::parse_dtype(a.dtype);
  const auto precision = dtype == luwu::workloads::DType::Fp32   ? luwu::models::Precision::Fp32
                         : dtype == luwu::workloads::DType::Bf16 ? luwu::models::Precision::Bf16
                                                                 : luwu::models::Precision::Fp16;
  const auto rates = read_rates(a.csv);
  luwu::models::GemmFit fit;
  try {
    fit = luwu::models::fit_gemm_ceiling(gpu, rates, precision);
  } catch (const std::invalid_argument& e) {
    throw luwu::InputError(a.csv, "", e.what());
  }
  // The base profile as written, with the fitted field and a new name.
  if (base.json_path != "$")
    throw std::invalid_argument("--profile " + a.profile + ": give a shipped profile or a profile file");
  luwu::Json out = luwu::load_json_file(base.file);
  const std::string name = a.name.empty() ? base.name + "-calibrated" : a.name;
  out["name"] = name;
  out["description"] = base.description + "; matmul ceiling fitted to " + a.csv + " by luwusim calibrate-gpu";
  out["fields"]["gemm_efficiency_max"] = {
      {"value", fit.gemm_efficiency_max},
      {"unit", "fraction"},
      {"source", fmt::format("measured: {} ({} GEMM shapes at {}, {} of them not bound by HBM), fitted by luwusim "
                             "calibrate-gpu: the largest share of peak a shape reached over its wave factor "
                             "(models/gpu_calibration.hpp); {} before",
                             a.csv, fit.rows.size(), a.dtype, fit.fitted_shapes, base.name)}};
  luwu::write_file_atomically(a.output, out.dump(2) + "\n");

  if (a.json) {
    luwu::Json rows = luwu::Json::array();
    for (const auto& r : fit.rows)
      rows.push_back({{"m", r.measured.m}, {"n", r.measured.n}, {"k", r.measured.k},
                      {"measured_flops_per_s", r.measured.flops_per_s}, {"memory_bound", r.memory_bound},
                      {"efficiency", r.efficiency}, {"model_before_flops_per_s", r.before_flops_per_s},
                      {"model_after_flops_per_s", r.after_flops_per_s}});
    std::cout << luwu::Json{{"profile", name}, {"written", a.output}, {"gemm_efficiency_max", fit.gemm_efficiency_max},
                            {"previous", fit.previous}, {"fitted_shapes", fit.fitted_shapes}, {"rows", rows}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: gemm_efficiency_max {:.4f} (was {:.4f}), from {} of {} shapes; wrote {}\n", name,
                           fit.gemm_efficiency_max, fit.previous, fit.fitted_shapes, fit.rows.size(), a.output);
  std::cout << fmt::format("{:>22} {:>13} {:>13} {:>13} {:>8}\n", "m x n x k", "measured", "model before",
                           "model after", "after");
  for (const auto& r : fit.rows)
    std::cout << fmt::format("{:>22} {:>8.1f} TF/s {:>8.1f} TF/s {:>8.1f} TF/s {:>+7.1f}%{}\n",
                             fmt::format("{:g} x {:g} x {:g}", r.measured.m, r.measured.n, r.measured.k),
                             r.measured.flops_per_s / 1e12, r.before_flops_per_s / 1e12, r.after_flops_per_s / 1e12,
                             100 * (r.after_flops_per_s / r.measured.flops_per_s - 1),
                             r.memory_bound ? "  (HBM-bound: not fitted)" : "");
  return 0;
}

const bool registered = luwu::cli::register_command(
    "calibrate-gpu", "fit a GPU profile's matmul ceiling to measured GEMM rates and write the profile",
    [](CLI::App& app) {
      auto a = std::make_shared<CalibrateGpuArgs>();
      app.add_option("--profile", a->profile, "the GPU profile to start from: a shipped name or a file")->required();
      app.add_option("--gemm-csv", a->csv, "measured GEMM rates: columns m, n, k, tflops (TFLOP/s), one shape a line")
          ->required();
      app.add_option("-o,--output", a->output, "the profile to write")->required();
      app.add_option("--name", a->name, "the written profile's name (default: the base's, -calibrated)");
      app.add_option("--dtype", a->dtype, "the measurements' precision: bf16, fp16 or fp32")->capture_default_str();
      app.add_flag("--json", a->json, "print the fit as JSON");
      return [a]() { return run_calibrate_gpu(*a); };
    });

}  // namespace
