#include "sim/experiment/kernel_profile_check.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "common/input_error.hpp"
#include "models/profile.hpp"
#include "sim/engine/op_timing.hpp"

namespace luwu::sim {
namespace {

std::vector<std::string> parts_of(const std::string& name) {
  std::vector<std::string> parts(1);
  for (unsigned char c : name) {
    if (std::isalnum(c)) parts.back() += static_cast<char>(std::tolower(c));
    else if (!parts.back().empty()) parts.emplace_back();
  }
  if (parts.back().empty()) parts.pop_back();
  return parts;
}

// 1-3 letters, 2-4 digits, an optional letter.
bool is_product(const std::string& p) {
  std::size_t i = 0;
  while (i < p.size() && std::isalpha(static_cast<unsigned char>(p[i]))) ++i;
  const std::size_t letters = i;
  while (i < p.size() && std::isdigit(static_cast<unsigned char>(p[i]))) ++i;
  const std::size_t digits = i - letters;
  const std::size_t rest = p.size() - i;
  return letters >= 1 && letters <= 3 && digits >= 2 && digits <= 4 && rest <= 1 && p.rfind("sxm", 0) != 0;
}

bool is_memory(const std::string& p) {
  return p.size() > 2 && p.compare(p.size() - 2, 2, "gb") == 0 &&
         std::all_of(p.begin(), p.end() - 2, [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

GpuIdentity identify_gpu(const std::string& name) {
  GpuIdentity id;
  for (const auto& p : parts_of(name)) {
    if (p.rfind("sxm", 0) == 0) {
      if (id.form.empty()) id.form = "sxm";
    } else if (p.rfind("pcie", 0) == 0) {
      if (id.form.empty()) id.form = "pcie";
    } else if (is_memory(p)) {
      if (id.memory.empty()) id.memory = p;
    } else if (id.product.empty() && is_product(p)) {
      id.product = p;
    }
  }
  return id;
}

std::string gpu_difference(const GpuIdentity& a, const GpuIdentity& b) {
  if (a.product != b.product) return "product " + (a.product.empty() ? "unknown" : a.product) + " against " + b.product;
  if (!a.memory.empty() && !b.memory.empty() && a.memory != b.memory) return "memory " + a.memory + " against " + b.memory;
  if (!a.form.empty() && !b.form.empty() && a.form != b.form) return "form factor " + a.form + " against " + b.form;
  return "";
}

workloads::KernelProfile profile_for_gpu(const workloads::KernelProfile& profile, const std::string& gpu_name,
                                         const models::GpuSpec& gpu, workloads::DType dtype, bool allow_other_gpu,
                                         std::string* scaled_from) {
  if (profile.device_name.empty()) return profile;
  const GpuIdentity profiled = identify_gpu(profile.device_name), scenario = identify_gpu(gpu_name);
  const std::string difference = gpu_difference(profiled, scenario);
  if (difference.empty()) return profile;
  const std::string what = fmt::format("the profile's kernels ran on a {}, the scenario's GPU is {} ({})",
                                       profile.device_name, gpu_name, difference);
  if (!allow_other_gpu)
    throw InputError(profile.file, "$.deviceProperties",
                     what + ": its times are not this GPU's; profile the scenario's GPU, or allow another GPU "
                            "(--allow-other-gpu, or \"kernel_times_other_gpu\": true) to scale them by the two GPUs' peaks");
  // The shipped profile of the profiled GPU, to scale from.
  std::optional<models::GpuSpec> from;
  for (const auto& name : models::shipped_profile_names()) {
    const models::Profile p = models::find_profile(name);
    if (p.kind == "gpu" && gpu_difference(profiled, identify_gpu(name)).empty()) {
      from = models::gpu_from_profile(p);
      break;
    }
  }
  if (!from)
    throw InputError(profile.file, "$.deviceProperties",
                     what + ", and luwusim ships no profile of a " + profile.device_name +
                         " to scale its times from (`luwusim profiles list`); profile the scenario's GPU");
  const models::Precision precision = precision_of(dtype);
  const double compute = from->peak_flops(precision) / gpu.peak_flops(precision), memory = from->hbm_Bps / gpu.hbm_Bps;
  workloads::KernelProfile scaled = profile;
  for (auto& k : scaled.kernels)
    k.duration_s *= k.kind == workloads::ProfiledKind::Gemm || k.kind == workloads::ProfiledKind::Attention ? compute : memory;
  if (scaled_from)
    *scaled_from = fmt::format("scaled from {} ({}): GEMM and attention times x {:.3g} (peak FLOP/s), others x {:.3g} (HBM)",
                               profile.device_name, from->name, compute, memory);
  return scaled;
}

// A kernel that moves less than this may be served from L2 (40 MB on the A100, 50 MB on the H100)
// faster than HBM: its bytes are not held to the HBM bandwidth.
constexpr double kBeyondL2Bytes = 64e6;

void check_measured_rates(const workloads::Trace& trace, const models::GpuSpec& gpu, const std::string& profile_file) {
  const double peak = gpu.peak_flops(precision_of(trace.training.dtype));
  for (const auto& list : trace.kernel_lists)
    for (const auto& k : list) {
      if (k.measured_s <= 0) continue;
      const double flops_rate = k.flops / k.measured_s, bytes_rate = k.bytes / k.measured_s;
      if (flops_rate > peak * (1 + 1e-9))
        throw InputError(profile_file, "$.traceEvents",
                         fmt::format("the profile times the trace's kernel {} ({:.4g} GFLOP) at {:.4g} us: {:.4g} TFLOP/s, "
                                     "above the {}'s peak of {:.4g} TFLOP/s; a profile of another model, GPU or unit",
                                     k.name, k.flops / 1e9, k.measured_s * 1e6, flops_rate / 1e12, gpu.name, peak / 1e12));
      if (k.bytes > kBeyondL2Bytes && bytes_rate > gpu.hbm_Bps * (1 + 1e-9))
        throw InputError(profile_file, "$.traceEvents",
                         fmt::format("the profile times the trace's kernel {} ({:.4g} MB) at {:.4g} us: {:.4g} GB/s, "
                                     "above the {}'s HBM bandwidth of {:.4g} GB/s; a profile of another model, GPU or unit",
                                     k.name, k.bytes / 1e6, k.measured_s * 1e6, bytes_rate / 1e9, gpu.name, gpu.hbm_Bps / 1e9));
    }
}

}  // namespace luwu::sim
