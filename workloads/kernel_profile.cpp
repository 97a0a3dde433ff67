// Reading a Kineto (PyTorch profiler) trace's GPU kernels, and naming their kind.
#include "workloads/kernel_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

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
    case ProfiledKind::Copy: return "copy";
  }
  return "?";
}

ProfiledKind classify_kernel_name(const std::string& name) {
  const std::string n = lower(name);
  if (contains_any(n, {"nccl", "rccl", "deep_ep", "deepep", "all_reduce", "allreduce", "all_gather", "allgather",
                       "reduce_scatter", "alltoall", "all_to_all"}))
    return ProfiledKind::Communication;
  if (contains_any(n, {"memcpy", "memset"})) return ProfiledKind::Copy;
  if (contains_any(n, {"multi_tensor", "adam", "sgd", "optimizer"})) return ProfiledKind::Optimizer;
  if (contains_any(n, {"flash", "fmha", "attention", "attn"})) return ProfiledKind::Attention;
  if (contains_any(n, {"transpose", "permute"})) return ProfiledKind::Elementwise;
  if (contains_any(n, {"gemm", "cutlass", "xmma", "cublas", "matmul", "wgmma", "cijk_", "hipblaslt", "ampere_", "volta_",
                       "turing_", "hopper_", "sm70_", "sm75_", "sm80_", "sm86_", "sm89_", "sm90_"}))
    return ProfiledKind::Gemm;
  return ProfiledKind::Elementwise;
}

namespace {

struct StepWindow {
  int number = 0;
  double begin_us = 0, end_us = 0;
};

// A correlation id: an integer below 2^53, or none (what else a profile holds there is not used).
std::optional<std::int64_t> correlation_of(const JsonNode& e) {
  if (!e.has("args") || !e.at("args").is_object() || !e.at("args").has("correlation")) return std::nullopt;
  const JsonNode c = e.at("args").at("correlation");
  if (!c.is_number()) return std::nullopt;
  const double v = c.as_number();
  if (!(v >= 0 && v < 9007199254740992.0) || v != std::floor(v)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

// A dimension list of "Input Dims": non-negative integers below 2^40, or none.
std::optional<std::vector<std::int64_t>> dims_of(const JsonNode& node) {
  if (!node.is_array()) return std::nullopt;
  std::vector<std::int64_t> dims;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const JsonNode d = node.at(i);
    if (!d.is_number()) return std::nullopt;
    const double v = d.as_number();
    if (!(v >= 0 && v < 1099511627776.0) || v != std::floor(v)) return std::nullopt;
    dims.push_back(static_cast<std::int64_t>(v));
  }
  return dims;
}

// The matrix multiply of a host op that names its operands' shapes, or none.
std::optional<ProfiledGemm> gemm_of(const JsonNode& e, std::size_t index) {
  if (!e.has("name") || !e.at("name").is_string() || !e.has("args") || !e.at("args").is_object() ||
      !e.at("args").has("Input Dims"))
    return std::nullopt;
  return profiled_gemm(e.at("name").as_string(), e.at("args").at("Input Dims"),
                       "$.traceEvents[" + std::to_string(index) + "].args.Input Dims");
}

// "ProfilerStep#12" -> 12; -1 for any other name.
int step_number(const std::string& name) {
  const std::string prefix = "ProfilerStep#";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 9) return -1;
  int n = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

// The name deviceProperties gives the device of this id (or its only entry), "" when none.
std::string device_name_of(const JsonNode& root, std::optional<std::int64_t> device) {
  if (!root.has("deviceProperties")) return "";
  const JsonNode props = root.at("deviceProperties");
  if (!props.is_array()) return "";
  for (std::size_t i = 0; i < props.size(); ++i) {
    const JsonNode p = props.at(i);
    if (!p.is_object() || !p.has("name") || !p.at("name").is_string()) continue;
    const bool same_id = device && p.has("id") && p.at("id").is_number() && p.at("id").as_number() == static_cast<double>(*device);
    if (same_id || (props.size() == 1)) return p.at("name").as_string();
  }
  return "";
}

}  // namespace

std::optional<ProfiledGemm> profiled_gemm(const std::string& op_name, const JsonNode& all, const std::string& path) {
  static const std::map<std::string, std::pair<int, int>> operands = {  // op -> (A, B) in Input Dims
      {"aten::mm", {0, 1}}, {"aten::addmm", {1, 2}}, {"aten::bmm", {0, 1}}, {"aten::baddbmm", {1, 2}}, {"aten::linear", {0, 1}}};
  const auto op = operands.find(op_name);
  if (op == operands.end()) return std::nullopt;
  if (!all.is_array() || all.size() <= static_cast<std::size_t>(std::max(op->second.first, op->second.second)))
    return std::nullopt;
  const auto a = dims_of(all.at(static_cast<std::size_t>(op->second.first)));
  const auto b = dims_of(all.at(static_cast<std::size_t>(op->second.second)));
  if (!a || !b || a->size() < 2 || b->size() < 2) return std::nullopt;
  ProfiledGemm g;
  g.op = op->first;
  g.path = path;
  g.k = a->back();
  // linear, mm and addmm fold A's leading dims into m (PyTorch flattens [b, s, h] to [b s, h]);
  // bmm and baddbmm keep their batch apart, as attention's kernels do.
  const bool batched = op->first == "aten::bmm" || op->first == "aten::baddbmm";
  long double m = batched ? static_cast<long double>((*a)[a->size() - 2]) : 1;
  if (!batched)
    for (std::size_t i = 0; i + 1 < a->size(); ++i) m *= static_cast<long double>((*a)[i]);
  if (m > 1099511627776.0L) return std::nullopt;
  g.m = static_cast<std::int64_t>(m);
  // linear's weight is [n, k]; the others' B is [(batch,) k, n].
  g.n = op->first == "aten::linear" ? (*b)[b->size() - 2] : b->back();
  return g;
}


KernelProfile kineto_profile_from_json(const JsonNode& root, const KinetoOptions& options) {
  KernelProfile profile;
  profile.file = root.file();
  const JsonNode events = root.at("traceEvents");
  std::optional<std::int64_t> device;
  std::string device_path;
  std::vector<StepWindow> windows;
  std::map<std::int64_t, double> launch_us;  // correlation -> the host's launch time
  std::vector<double> placed_at_us;          // per kernel: when it was launched (or started)
  std::vector<std::int64_t> correlations;
  std::vector<std::pair<double, ProfiledGemm>> gemm_ops;  // with their host start
  for (std::size_t i = 0; i < events.size(); ++i) {
    const JsonNode e = events.at(i);
    e.expect_object();
    if (!e.has("ph") || !e.at("ph").is_string() || e.at("ph").as_string() != "X") continue;
    const std::string cat = e.has("cat") && e.at("cat").is_string() ? lower(e.at("cat").as_string()) : "";
    if (cat != "kernel") {
      // Host events place kernels in steps: the step marks, and the launches by correlation.
      if (!e.has("name") || !e.at("name").is_string()) continue;
      if (const int n = step_number(e.at("name").as_string()); n >= 0) {
        const double ts = e.at("ts").as_number(), dur = e.at("dur").as_non_negative();
        windows.push_back({n, ts, ts + dur});
      } else if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") {
        if (const auto c = correlation_of(e)) launch_us[*c] = e.at("ts").as_number();
      } else if (auto g = gemm_of(e, i)) {
        gemm_ops.emplace_back(e.at("ts").as_number(), std::move(*g));
      }
      continue;
    }
    ProfiledKernel k;
    k.name = e.at("name").as_string();
    k.kind = classify_kernel_name(k.name);
    k.start_us = e.at("ts").as_number();
    const double dur_us = e.at("dur").as_non_negative();
    if (dur_us > kMaxKernelMicroseconds) e.at("dur").fail("a kernel of more than an hour: \"dur\" is in microseconds");
    k.duration_s = dur_us * 1e-6;
    std::int64_t correlation = -1;
    if (e.has("args")) {
      const JsonNode args = e.at("args");
      if (args.has("device")) {
        const JsonNode d = args.at("device");
        const std::int64_t id = d.as_int(0, 1 << 20);
        if (device && *device != id)
          d.fail("kernels of device " + std::to_string(*device) + " (" + device_path + ") and of device " +
                 std::to_string(id) + ": a profile is one GPU's, give one device's trace");
        device = id;
        device_path = d.path();
      }
      if (args.has("stream")) k.stream = args.at("stream").as_int(-1, std::int64_t{1} << 40);
    }
    if (const auto c = correlation_of(e)) correlation = *c;
    correlations.push_back(correlation);
    profile.kernels.push_back(std::move(k));
  }
  profile.device_name = device_name_of(root, device);

  // Kernels on a stream that runs communication are communication.
  std::set<std::int64_t> communication_streams;
  for (const auto& k : profile.kernels)
    if (k.kind == ProfiledKind::Communication && k.stream >= 0) communication_streams.insert(k.stream);
  for (auto& k : profile.kernels)
    if (k.kind != ProfiledKind::Communication && communication_streams.count(k.stream)) {
      k.kind = ProfiledKind::Communication;
      k.on_communication_stream = true;
    }

  // One profiler step's kernels.
  if (!windows.empty()) {
    std::sort(windows.begin(), windows.end(), [](const StepWindow& a, const StepWindow& b) { return a.number < b.number; });
    profile.steps = static_cast<int>(windows.size());
    std::vector<int> step_of(profile.kernels.size(), -1);
    std::map<int, double> kernel_time;  // per step
    for (std::size_t i = 0; i < profile.kernels.size(); ++i) {
      const auto launch = launch_us.find(correlations[i]);
      const double at = launch != launch_us.end() ? launch->second : profile.kernels[i].start_us;
      for (const auto& w : windows)
        if (at >= w.begin_us && at <= w.end_us) {
          step_of[i] = w.number;
          break;
        }
      if (step_of[i] >= 0) kernel_time[step_of[i]] += profile.kernels[i].duration_s;
    }
    if (options.step >= 0) {
      if (std::none_of(windows.begin(), windows.end(), [&](const StepWindow& w) { return w.number == options.step; }))
        root.at("traceEvents").fail("no ProfilerStep#" + std::to_string(options.step) + " in the profile (it marks steps " +
                                    std::to_string(windows.front().number) + " to " + std::to_string(windows.back().number) + ")");
      profile.step_used = options.step;
    } else {
      std::vector<std::pair<double, int>> by_time;  // (kernel time, step), steps without kernels too
      for (const auto& w : windows) by_time.push_back({kernel_time[w.number], w.number});
      std::stable_sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      profile.step_used = by_time[(by_time.size() - 1) / 2].second;
      profile.median_step = true;
    }
    std::vector<ProfiledKernel> kept;
    for (std::size_t i = 0; i < profile.kernels.size(); ++i) {
      if (step_of[i] == profile.step_used) kept.push_back(std::move(profile.kernels[i]));
      else ++profile.kernels_in_other_steps;
    }
    profile.kernels = std::move(kept);
    const StepWindow& used = *std::find_if(windows.begin(), windows.end(), [&](const StepWindow& w) { return w.number == profile.step_used; });
    for (auto& [ts, g] : gemm_ops)
      if (ts >= used.begin_us && ts <= used.end_us) profile.gemm_ops.push_back(std::move(g));
  } else {
    for (auto& [ts, g] : gemm_ops) profile.gemm_ops.push_back(std::move(g));
  }
  std::stable_sort(profile.kernels.begin(), profile.kernels.end(),
                   [](const ProfiledKernel& a, const ProfiledKernel& b) { return a.start_us < b.start_us; });
  return profile;
}

KernelProfile load_kineto_profile(const std::string& file, const KinetoOptions& options) {
  const Json doc = load_json_file(file);
  return kineto_profile_from_json(JsonNode(doc, file), options);
}

}  // namespace luwu::workloads
