// Putting a profile's measured kernel durations on a trace's kernels (the rule: kernel_times.hpp).
#include "workloads/kernel_times.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "common/input_error.hpp"

namespace luwu::workloads {

namespace {

ProfiledKind kind_of(const Kernel& k) {
  switch (k.kind) {
    case KernelKind::Gemm: return ProfiledKind::Gemm;
    case KernelKind::Attention: return ProfiledKind::Attention;
    case KernelKind::Elementwise: return ProfiledKind::Elementwise;
  }
  return ProfiledKind::Elementwise;
}

// What the analytic time of a kernel of this kind is proportional to.
double work_of(const Kernel& k) { return k.kind == KernelKind::Elementwise ? k.bytes : k.flops; }

using Slot = std::pair<int, std::size_t>;  // (kernel list, position in it)

}  // namespace

std::string to_string(MatchRule r) {
  switch (r) {
    case MatchRule::InOrder: return "in-order";
    case MatchRule::Scaled: return "scaled";
    case MatchRule::Analytic: return "analytic";
  }
  return "?";
}

void check_gemm_shapes(const Trace& trace, const KernelProfile& profile) {
  std::set<std::array<std::int64_t, 3>> shapes;  // each GEMM's dims, sorted
  for (const auto& list : trace.kernel_lists)
    for (const auto& k : list)
      if (k.gemm.m > 0) {
        std::array<std::int64_t, 3> d{k.gemm.m, k.gemm.n, k.gemm.k};
        std::sort(d.begin(), d.end());
        shapes.insert(d);
      }
  for (const auto& g : profile.gemm_ops) {
    std::array<std::int64_t, 3> d{g.m, g.n, g.k};
    std::sort(d.begin(), d.end());
    if (shapes.count(d)) continue;
    throw luwu::InputError(profile.file, g.path,
                           fmt::format("the profile's {} multiplies {} x {} by {} x {}: no matrix multiply of {} at micro-batch "
                                       "{} and sequence {} has these dimensions; a profile of another model or batch",
                                       g.op, g.m, g.k, g.k, g.n, trace.model.name, trace.training.micro_batch,
                                       trace.training.seq_len));
  }
}

KernelTimesReport apply_kernel_times(Trace& trace, const KernelProfile& profile) {
  check_gemm_shapes(trace, profile);
  KernelTimesReport report;
  report.file = profile.file;
  report.device_name = profile.device_name;
  report.profiler_steps = profile.steps;
  report.step_used = profile.step_used;
  report.median_step = profile.median_step;
  report.kernels_in_other_steps = profile.kernels_in_other_steps;
  const ProfiledKind kinds[] = {ProfiledKind::Gemm, ProfiledKind::Attention, ProfiledKind::Elementwise};

  // One micro-step's kernel launches of each kind, in program order (every micro-step launches the same).
  std::map<ProfiledKind, std::vector<Slot>> launches;
  for (const auto& op : trace.ops) {
    if (op.micro_step != 0) continue;
    const auto& list = trace.kernels_of(op);
    for (std::size_t p = 0; p < list.size(); ++p) launches[kind_of(list[p])].push_back({op.kernels, p});
  }
  std::map<ProfiledKind, std::vector<double>> measured;
  for (const auto& k : profile.kernels) {
    if (k.kind == ProfiledKind::Communication) {
      ++report.excluded_communication;
      if (k.on_communication_stream) ++report.on_communication_streams;
    } else if (k.kind == ProfiledKind::Optimizer) {
      ++report.excluded_optimizer;
    } else if (k.kind == ProfiledKind::Copy) {
      ++report.excluded_copies;
    } else {
      measured[k.kind].push_back(k.duration_s);
    }
  }
  const std::size_t gemms = launches[ProfiledKind::Gemm].size(), profiled_gemms = measured[ProfiledKind::Gemm].size();
  if (gemms > 0 && profiled_gemms >= gemms && profiled_gemms % gemms == 0) report.repetitions = profiled_gemms / gemms;

  auto kernel_at = [&](const Slot& s) -> Kernel& { return trace.kernel_lists.at(static_cast<std::size_t>(s.first)).at(s.second); };
  for (ProfiledKind kind : kinds) {
    const auto& slots = launches[kind];
    const auto& times = measured[kind];
    KindMatch m{kind, times.size(), slots.size(), MatchRule::Analytic, 0};
    double total = 0;
    for (double t : times) total += t;
    m.measured_s_per_micro_step = total / static_cast<double>(report.repetitions);
    if (!slots.empty() && times.size() == report.repetitions * slots.size()) {
      m.rule = MatchRule::InOrder;
      std::map<Slot, std::pair<double, std::size_t>> sums;  // sum of matched durations, how many
      for (std::size_t i = 0; i < times.size(); ++i) {
        auto& [sum, n] = sums[slots[i % slots.size()]];
        sum += times[i];
        ++n;
      }
      for (const auto& [slot, sum_n] : sums) kernel_at(slot).measured_s = sum_n.first / static_cast<double>(sum_n.second);
    } else if (!slots.empty() && !times.empty()) {
      double work = 0;
      for (const auto& s : slots) work += work_of(kernel_at(s));
      if (work > 0) {
        m.rule = MatchRule::Scaled;
        std::map<Slot, bool> done;
        for (const auto& s : slots)
          if (!done[s]) {
            done[s] = true;
            kernel_at(s).measured_s = m.measured_s_per_micro_step * work_of(kernel_at(s)) / work;
          }
      }
    }
    report.kinds.push_back(m);
  }
  for (const auto& op : trace.ops)
    for (const auto& k : trace.kernels_of(op)) ++(k.measured_s > 0 ? report.measured_launches : report.analytic_launches);
  // Given and used for nothing is not a measurement: a CPU-only profile (no CUDA activities), or
  // one of communication and copies alone, would silently leave every kernel analytic.
  if (report.measured_launches == 0)
    throw luwu::InputError(profile.file, "",
                           "times none of the trace's kernels: it holds " + std::to_string(profile.kernels.size()) +
                               " GPU kernels in the step used, of which " + std::to_string(report.excluded_communication) +
                               " communication, " + std::to_string(report.excluded_optimizer) + " optimizer and " +
                               std::to_string(report.excluded_copies) +
                               " memcpy/memset are left out; profile the GPU (CUDA activities) for the kernel times");
  return report;
}

luwu::Json kernel_times_to_json(const KernelTimesReport& r) {
  luwu::Json kinds = luwu::Json::array();
  for (const auto& k : r.kinds)
    kinds.push_back({{"kind", to_string(k.kind)},
                     {"profiled_kernels", k.profiled},
                     {"trace_kernels_per_micro_step", k.per_micro_step},
                     {"rule", to_string(k.rule)},
                     {"measured_s_per_micro_step", k.measured_s_per_micro_step}});
  return {{"file", r.file},
          {"device", r.device_name},
          {"scaled_from_other_gpu", r.scaled_from},
          {"profiler_steps", r.profiler_steps},
          {"step_used", r.step_used},
          {"median_step", r.median_step},
          {"kernels_in_other_steps", r.kernels_in_other_steps},
          {"profiled_micro_batches", r.repetitions},
          {"kinds", kinds},
          {"excluded_communication_kernels", r.excluded_communication},
          {"excluded_on_communication_streams", r.on_communication_streams},
          {"excluded_optimizer_kernels", r.excluded_optimizer},
          {"excluded_copy_kernels", r.excluded_copies},
          {"measured_kernel_launches", r.measured_launches},
          {"analytic_kernel_launches", r.analytic_launches}};
}

std::string kernel_times_summary(const KernelTimesReport& r) {
  std::string kinds;
  for (const auto& k : r.kinds)
    kinds += fmt::format("{}{} {} ({} profiled, {} per micro-step)", kinds.empty() ? "" : ", ", to_string(k.kind),
                         to_string(k.rule), k.profiled, k.per_micro_step);
  std::string source = r.device_name.empty() ? "no GPU named" : r.device_name;
  if (!r.scaled_from.empty()) source += ", " + r.scaled_from;
  if (r.profiler_steps > 0)
    source += fmt::format("; step {} of {} profiler steps{}, {} kernels of the others left out", r.step_used, r.profiler_steps,
                          r.median_step ? " (the median)" : "", r.kernels_in_other_steps);
  return fmt::format(
      "kernel times from {} ({}; {} micro-batch{} profiled): {} of {} kernel launches measured, {} analytic; {}; "
      "left out: {} communication ({} by their stream), {} optimizer, {} memcpy/memset kernels",
      r.file, source, r.repetitions, r.repetitions == 1 ? "" : "es", r.measured_launches,
      r.measured_launches + r.analytic_launches, r.analytic_launches, kinds, r.excluded_communication,
      r.on_communication_streams, r.excluded_optimizer, r.excluded_copies);
}

}  // namespace luwu::workloads
