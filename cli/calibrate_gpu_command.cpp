// `luwusim calibrate-gpu --profile GPU --gemm-csv RATES.csv -o OUT.json`: fits a GPU profile's
// matmul ceiling to measured GEMM rates (models/gpu_calibration.hpp) and writes the profile with
// the fitted gemm_efficiency_max, sourced to the file.  The CSV: a header with m, n, k and tflops
// (TFLOP/s, as mamf-finder prints them), one measured shape per line; # comments.  An optional
// dtype column (bench/gpu_rates.py writes one) keeps the rows of --dtype and leaves out the rest.
// `--rates-json OUT/rates.json` (bench/gpu_rates.py) also fits hbm_efficiency (the device copy)
// and row_reduction_hbm_efficiency (its layer norms and softmaxes); `--block-json OUT.json`
// (bench/gpu_block.py) fits broadcast_hbm_efficiency (its profiled masked fills); any of the three.
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
  std::string rates_json;
  std::string block_json;
  std::string output;
  std::string name;
  std::string dtype = "bf16";
  std::string fit = "median";
  bool json = false;
};

struct Rates {
  std::vector<luwu::models::GemmMeasurement> kept;
  std::size_t other_dtype = 0;  // rows left out: another precision
};

Rates read_rates(const std::string& file, const std::string& dtype) {
  const auto records = luwu::read_csv_file(file);
  const auto& header = records.front().fields;
  std::size_t dtype_column = header.size();
  for (std::size_t c = 0; c < header.size(); ++c)
    if (header[c] == "dtype") dtype_column = c;
  auto column = [&](const std::string& name) {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    throw luwu::InputError(file, "line " + std::to_string(records.front().line),
                           "the header has no \"" + name + "\" column (expected m, n, k, tflops)");
  };
  const std::size_t cm = column("m"), cn = column("n"), ck = column("k"), ct = column("tflops");
  Rates out;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& rec = records[r];
    const std::string where = "line " + std::to_string(rec.line);
    if (dtype_column < header.size() && rec.fields[dtype_column] != dtype) {
      ++out.other_dtype;
      continue;
    }
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
    out.kept.push_back({number(cm), number(cn), number(ck), number(ct) * 1e12, file + " " + where});
    if (out.kept.back().m > 1e9 || out.kept.back().n > 1e9 || out.kept.back().k > 1e9)
      throw luwu::InputError(file, where, "a GEMM dimension above 1e9 is not a measurement");
  }
  if (out.kept.empty())
    throw luwu::InputError(file, "", out.other_dtype > 0 ? "no measured shape in " + dtype + " (its dtype column holds "
                                                               "only other precisions; see --dtype)"
                                                         : "no measured shape after the header");
  return out;
}

// bench/gpu_rates.py's kernels in the workload's byte count (workloads/kernels.hpp): the script
// counts a layer norm's backward as 3 tensors (gradient and input in, gradient out), the workload
// as 4 (twice its forward's 2); softmax's as 2 forward and 3 backward, as the workload does.
struct MeasuredReduction {
  const char* name;
  double workload_bytes_per_measured_byte;
};
constexpr MeasuredReduction kMeasuredReductions[] = {
    {"layer_norm_fwd", 1.0}, {"layer_norm_bwd", 4.0 / 3}, {"softmax_fwd", 1.0}, {"softmax_bwd", 1.0}};

struct HbmRates {
  double copy_Bps = 0;
  std::string copy_origin;
  std::vector<luwu::models::KernelMeasurement> reductions;
};

HbmRates read_hbm_rates(const std::string& file) {
  const luwu::Json doc = luwu::load_json_file(file);
  const luwu::JsonNode root(doc, file);
  HbmRates out;
  const luwu::JsonNode copy = root.at("hbm_bytes_per_s").at("copy");
  out.copy_Bps = copy.as_positive();
  out.copy_origin = file + ": " + copy.path();
  if (root.has("elementwise")) {
    const luwu::JsonNode shapes = root.at("elementwise");
    shapes.expect_object();
    for (const auto& shape : shapes.keys()) {
      const luwu::JsonNode kernels = shapes.at(shape);
      kernels.expect_object();
      for (const auto& k : kMeasuredReductions) {
        if (!kernels.has(k.name)) continue;
        const luwu::JsonNode m = kernels.at(k.name);
        out.reductions.push_back({shape + " " + k.name, m.at("bytes").as_positive() * k.workload_bytes_per_measured_byte,
                                  m.at("seconds").as_positive(), file + ": " + m.path()});
      }
    }
  }
  if (out.reductions.empty())
    root.fail("no layer_norm_fwd, layer_norm_bwd, softmax_fwd or softmax_bwd under elementwise: nothing to fit the "
              "row-reduction share to (bench/gpu_rates.py measures them)");
  return out;
}

// bench/gpu_block.py's profiled masked fills (PyTorch's non-vectorized elementwise_kernel, the
// causal mask broadcast over batch and heads) in the workload's byte count: the bf16 scores of its
// unfused cases read and written, the [s, s] boolean mask read once (workloads/kernels.cpp).
std::vector<luwu::models::KernelMeasurement> read_broadcast_kernels(const std::string& file) {
  const luwu::Json doc = luwu::load_json_file(file);
  const luwu::JsonNode root(doc, file);
  const luwu::JsonNode cases = root.at("cases");
  std::vector<luwu::models::KernelMeasurement> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const luwu::JsonNode c = cases.at(i);
    if (c.at("fused").as_bool()) continue;
    const double b = c.at("micro_batch").as_positive(), a = c.at("heads").as_positive(), s = c.at("seq").as_positive();
    const double bytes = 2 * 2 * b * a * s * s + s * s;
    const luwu::JsonNode kernels = c.at("top_kernels");
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const std::string name = kernels.at(k).at("name").as_string();
      if (name.find("elementwise_kernel<") == std::string::npos || name.find("masked") == std::string::npos) continue;
      out.push_back({c.at("name").as_string() + " masked fill", bytes, kernels.at(k).at("s").as_positive(),
                     file + ": " + kernels.at(k).path()});
    }
  }
  if (out.empty())
    root.fail("no profiled masked fill (a non-vectorized elementwise_kernel) in an unfused case: nothing to fit the "
              "broadcast share to (bench/gpu_block.py profiles them)");
  return out;
}

int run_calibrate_gpu(const CalibrateGpuArgs& a) {
  if (a.csv.empty() && a.rates_json.empty() && a.block_json.empty())
    throw luwu::InputError("calibrate-gpu", "", "give --gemm-csv, --rates-json, --block-json or several: nothing to fit");
  const luwu::models::Profile base = luwu::models::find_profile(a.profile);
  const luwu::models::GpuSpec gpu = luwu::models::gpu_from_profile(base);
  // The base profile as written, with the fitted fields and a new name.
  if (base.json_path != "$")
    throw std::invalid_argument("--profile " + a.profile + ": give a shipped profile or a profile file");
  luwu::Json out = luwu::load_json_file(base.file);
  const std::string name = a.name.empty() ? base.name + "-calibrated" : a.name;
  out["name"] = name;
  luwu::Json report{{"profile", name}, {"written", a.output}};
  std::string text, fitted_to;

  if (!a.csv.empty()) {
    const auto dtype = luwu::workloads::parse_dtype(a.dtype);
    const auto precision = dtype == luwu::workloads::DType::Fp32   ? luwu::models::Precision::Fp32
                           : dtype == luwu::workloads::DType::Bf16 ? luwu::models::Precision::Bf16
                                                                   : luwu::models::Precision::Fp16;
    const auto rates = read_rates(a.csv, a.dtype);
    const auto statistic = a.fit == "max" ? luwu::models::FitStatistic::max : luwu::models::FitStatistic::median;
    luwu::models::GemmFit fit;
    try {
      fit = luwu::models::fit_gemm_ceiling(gpu, rates.kept, precision, statistic);
    } catch (const std::invalid_argument& e) {
      throw luwu::InputError(a.csv, "", e.what());
    }
    fitted_to += "matmul ceiling fitted to " + a.csv;
    out["fields"]["gemm_efficiency_max"] = {
        {"value", fit.gemm_efficiency_max},
        {"unit", "fraction"},
        {"source", fmt::format("measured: {} ({} GEMM shapes at {}, {} of them fitted: not bound by HBM, at least one "
                               "wave of tiles), fitted by luwusim calibrate-gpu: the {} share of peak the shapes reached "
                               "over their wave factor (models/gpu_calibration.hpp), model / measured off by {:.1f}% on "
                               "average; {} before",
                               a.csv, fit.rows.size(), a.dtype, fit.fitted_shapes, a.fit,
                               100 * (fit.wave_quantization ? fit.mean_abs_error_waves : fit.mean_abs_error_no_waves),
                               base.name)}};
    out["fields"]["gemm_wave_quantization"] = {
        {"value", fit.wave_quantization},
        {"unit", "boolean"},
        {"source", fmt::format("measured: {}, fitted by luwusim calibrate-gpu: mean |model / measured - 1| {:.1f}% "
                               "with the waves of {:g} x {:g} tiles over {} SMs, {:.1f}% without",
                               a.csv, 100 * fit.mean_abs_error_waves, gpu.kernel_tile_elements,
                               gpu.kernel_tile_elements, gpu.sm_count, 100 * fit.mean_abs_error_no_waves)}};
    luwu::Json rows = luwu::Json::array();
    for (const auto& r : fit.rows)
      rows.push_back({{"m", r.measured.m}, {"n", r.measured.n}, {"k", r.measured.k},
                      {"measured_flops_per_s", r.measured.flops_per_s}, {"memory_bound", r.memory_bound},
                      {"sub_wave", r.sub_wave}, {"efficiency", r.efficiency},
                      {"model_before_flops_per_s", r.before_flops_per_s}, {"model_after_flops_per_s", r.after_flops_per_s}});
    report.update({{"fit", a.fit},
                   {"gemm_efficiency_max", fit.gemm_efficiency_max},
                   {"previous", fit.previous},
                   {"gemm_wave_quantization", fit.wave_quantization},
                   {"previous_gemm_wave_quantization", fit.previous_wave_quantization},
                   {"mean_abs_error_with_waves", fit.mean_abs_error_waves},
                   {"mean_abs_error_without_waves", fit.mean_abs_error_no_waves},
                   {"fitted_shapes", fit.fitted_shapes},
                   {"rows_of_other_dtypes", rates.other_dtype},
                   {"rows", rows}});
    text += fmt::format("{}: gemm_efficiency_max {:.4f} (was {:.4f}), the {} of {} of {} shapes; wave quantization "
                        "{} (model off by {:.1f}% on average with waves, {:.1f}% without)\n",
                        name, fit.gemm_efficiency_max, fit.previous, a.fit, fit.fitted_shapes, fit.rows.size(),
                        fit.wave_quantization ? "on" : "off", 100 * fit.mean_abs_error_waves,
                        100 * fit.mean_abs_error_no_waves);
    if (rates.other_dtype > 0)
      text += fmt::format("{} rows of other precisions than {} left out\n", rates.other_dtype, a.dtype);
    text += fmt::format("{:>22} {:>13} {:>13} {:>13} {:>8}\n", "m x n x k", "measured", "model before", "model after",
                        "after");
    for (const auto& r : fit.rows)
      text += fmt::format("{:>22} {:>8.1f} TF/s {:>8.1f} TF/s {:>8.1f} TF/s {:>+7.1f}%{}\n",
                          fmt::format("{:g} x {:g} x {:g}", r.measured.m, r.measured.n, r.measured.k),
                          r.measured.flops_per_s / 1e12, r.before_flops_per_s / 1e12, r.after_flops_per_s / 1e12,
                          100 * (r.after_flops_per_s / r.measured.flops_per_s - 1),
                          r.memory_bound ? "  (HBM-bound: not fitted)"
                          : r.sub_wave   ? "  (fewer tiles than SMs: not fitted)"
                                         : "");
  }

  if (!a.rates_json.empty()) {
    const HbmRates rates = read_hbm_rates(a.rates_json);
    luwu::models::HbmFit fit;
    try {
      fit = luwu::models::fit_hbm_rates(gpu, rates.copy_Bps, rates.copy_origin, rates.reductions);
    } catch (const std::invalid_argument& e) {
      throw luwu::InputError(a.rates_json, "", e.what());
    }
    fitted_to += std::string(fitted_to.empty() ? "" : ", ") + "HBM shares fitted to " + a.rates_json;
    out["fields"]["hbm_efficiency"] = {
        {"value", fit.hbm_efficiency},
        {"unit", "fraction"},
        {"source", fmt::format("measured: {} ($.hbm_bytes_per_s.copy: a device copy, bytes read plus written, "
                               "{:.3f} TB/s over {:.3f}), fitted by luwusim calibrate-gpu; {} before",
                               a.rates_json, rates.copy_Bps / 1e12, gpu.hbm_Bps / 1e12, base.name)}};
    out["fields"]["row_reduction_hbm_efficiency"] = {
        {"value", fit.row_reduction_hbm_efficiency},
        {"unit", "fraction"},
        {"source", fmt::format("measured: {} ({} layer norms and softmaxes in the workload's byte count, "
                               "{:.3f} to {:.3f} of the datasheet bandwidth), fitted by luwusim calibrate-gpu: "
                               "their median; {} before",
                               a.rates_json, fit.reductions, fit.reduction_share_min, fit.reduction_share_max,
                               base.name)}};
    report["hbm"] = {{"hbm_efficiency", fit.hbm_efficiency},
                     {"previous_hbm_efficiency", gpu.hbm_efficiency},
                     {"row_reduction_hbm_efficiency", fit.row_reduction_hbm_efficiency},
                     {"previous_row_reduction_hbm_efficiency", gpu.row_reduction_hbm_efficiency},
                     {"reductions", fit.reductions},
                     {"reduction_share_min", fit.reduction_share_min},
                     {"reduction_share_max", fit.reduction_share_max}};
    text += fmt::format("{}: hbm_efficiency {:.4f} (was {:.4f}, a copy), row_reduction_hbm_efficiency {:.4f} (was {:.4f}, "
                        "the median of {} norms and softmaxes, {:.3f} to {:.3f})\n",
                        name, fit.hbm_efficiency, gpu.hbm_efficiency, fit.row_reduction_hbm_efficiency,
                        gpu.row_reduction_hbm_efficiency, fit.reductions, fit.reduction_share_min,
                        fit.reduction_share_max);
  }

  if (!a.block_json.empty()) {
    const auto kernels = read_broadcast_kernels(a.block_json);
    luwu::models::BroadcastFit fit;
    try {
      fit = luwu::models::fit_broadcast_rate(gpu, kernels);
    } catch (const std::invalid_argument& e) {
      throw luwu::InputError(a.block_json, "", e.what());
    }
    fitted_to += std::string(fitted_to.empty() ? "" : ", ") + "the broadcast share fitted to " + a.block_json;
    out["fields"]["broadcast_hbm_efficiency"] = {
        {"value", fit.broadcast_hbm_efficiency},
        {"unit", "fraction"},
        {"source", fmt::format("measured: {} ({} profiled masked fills, PyTorch's non-vectorized elementwise kernel, "
                               "in the workload's byte count, {:.3f} to {:.3f} of the datasheet bandwidth), fitted by "
                               "luwusim calibrate-gpu: their median; {} before",
                               a.block_json, fit.kernels, fit.share_min, fit.share_max, base.name)}};
    report["broadcast"] = {{"broadcast_hbm_efficiency", fit.broadcast_hbm_efficiency},
                           {"previous_broadcast_hbm_efficiency", gpu.broadcast_hbm_efficiency},
                           {"kernels", fit.kernels},
                           {"share_min", fit.share_min},
                           {"share_max", fit.share_max}};
    text += fmt::format("{}: broadcast_hbm_efficiency {:.4f} (was {:.4f}, the median of {} masked fills, {:.3f} to "
                        "{:.3f})\n",
                        name, fit.broadcast_hbm_efficiency, gpu.broadcast_hbm_efficiency, fit.kernels, fit.share_min,
                        fit.share_max);
  }

  out["description"] = base.description + "; " + fitted_to + " by luwusim calibrate-gpu";
  luwu::write_file_atomically(a.output, out.dump(2) + "\n");
  if (a.json)
    std::cout << report.dump(2) << "\n";
  else
    std::cout << text << "wrote " << a.output << "\n";
  return 0;
}

const bool registered = luwu::cli::register_command(
    "calibrate-gpu", "fit a GPU profile's matmul ceiling and HBM shares to measured rates and write the profile",
    [](CLI::App& app) {
      auto a = std::make_shared<CalibrateGpuArgs>();
      app.add_option("--profile", a->profile, "the GPU profile to start from: a shipped name or a file")->required();
      app.add_option("--gemm-csv", a->csv, "measured GEMM rates: columns m, n, k, tflops (TFLOP/s), one shape a line");
      app.add_option("--rates-json", a->rates_json,
                     "bench/gpu_rates.py's rates.json: fits hbm_efficiency (its copy) and row_reduction_hbm_efficiency "
                     "(its layer norms and softmaxes)");
      app.add_option("--block-json", a->block_json,
                     "bench/gpu_block.py's output: fits broadcast_hbm_efficiency (its profiled masked fills)");
      app.add_option("-o,--output", a->output, "the profile to write")->required();
      app.add_option("--name", a->name, "the written profile's name (default: the base's, -calibrated)");
      app.add_option("--dtype", a->dtype, "the measurements' precision: bf16, fp16 or fp32 (a dtype column keeps its rows)")
          ->capture_default_str();
      app.add_option("--fit", a->fit, "the ceiling: the median share over the shapes (the typical large GEMM) or the max "
                                      "(mamf-finder's maximum achievable)")
          ->check(CLI::IsMember({"median", "max"}))
          ->capture_default_str();
      app.add_flag("--json", a->json, "print the fit as JSON");
      return [a]() { return run_calibrate_gpu(*a); };
    });

}  // namespace
