// Reading a Kineto (PyTorch profiler) trace's GPU kernels, and naming their kind.
#include "workloads/kernel_profile.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace luwu::workloads {

namespace {

// A kernel of more than an hour is a unit slip, not a measurement.
constexpr double kMaxKernelMicroseconds = 3600e6;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool contains_any(const std::string& s, std::initializer_list<const char*> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](const char* p) { return s.find(p) != std::string::npos; });
}

}  // namespace

std::string to_string(ProfiledKind k) {
  switch (k) {
    case ProfiledKind::Gemm: return "gemm";
    case ProfiledKind::Attention: return "attention";
    case ProfiledKind::Elementwise: return "elementwise";
    case ProfiledKind::Communication: return "communication";
    case ProfiledKind::Optimizer: return "optimizer";
  }
  return "?";
}

ProfiledKind classify_kernel_name(const std::string& name) {
  const std::string n = lower(name);
  if (contains_any(n, {"nccl"})) return ProfiledKind::Communication;
  if (contains_any(n, {"multi_tensor", "adam", "sgd", "optimizer"})) return ProfiledKind::Optimizer;
  if (contains_any(n, {"flash", "fmha", "attention", "attn"})) return ProfiledKind::Attention;
  if (contains_any(n, {"gemm", "cutlass", "xmma", "cublas", "matmul", "wgmma", "ampere_", "volta_", "turing_",
                       "hopper_", "sm70_", "sm75_", "sm80_", "sm86_", "sm89_", "sm90_"}))
    return ProfiledKind::Gemm;
  return ProfiledKind::Elementwise;
}

KernelProfile kineto_profile_from_json(const JsonNode& root) {
  KernelProfile profile;
  profile.file = root.file();
  const JsonNode events = root.at("traceEvents");
  std::optional<std::int64_t> device;
  std::string device_path;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const JsonNode e = events.at(i);
    e.expect_object();
    if (!e.has("cat") || !e.at("cat").is_string() || lower(e.at("cat").as_string()) != "kernel") continue;
    if (!e.has("ph") || e.at("ph").as_string() != "X") continue;
    ProfiledKernel k;
    k.name = e.at("name").as_string();
    k.kind = classify_kernel_name(k.name);
    k.start_us = e.at("ts").as_number();
    const double dur_us = e.at("dur").as_non_negative();
    if (dur_us > kMaxKernelMicroseconds) e.at("dur").fail("a kernel of more than an hour: \"dur\" is in microseconds");
    k.duration_s = dur_us * 1e-6;
    if (e.has("args") && e.at("args").has("device")) {
      const JsonNode d = e.at("args").at("device");
      const std::int64_t id = d.as_int(0, 1 << 20);
      if (device && *device != id)
        d.fail("kernels of device " + std::to_string(*device) + " (" + device_path + ") and of device " +
               std::to_string(id) + ": a profile is one GPU's, give one device's trace");
      device = id;
      device_path = d.path();
    }
    profile.kernels.push_back(std::move(k));
  }
  std::stable_sort(profile.kernels.begin(), profile.kernels.end(),
                   [](const ProfiledKernel& a, const ProfiledKernel& b) { return a.start_us < b.start_us; });
  return profile;
}

KernelProfile load_kineto_profile(const std::string& file) {
  const Json doc = load_json_file(file);
  return kineto_profile_from_json(JsonNode(doc, file));
}

}  // namespace luwu::workloads
