#pragma once
// Measured kernel durations in place of the analytic GPU model: which profiled kernel times which
// kernel of a trace.  The rule, per kind (gemm, attention, elementwise; kernel_profile.hpp names
// a profiled kernel's kind, NCCL and optimizer kernels are left out):
//
//   The profile is of this trace's model and training settings: one micro-batch's forward,
//   recompute and backward kernels, or R of them.  R is read from the GEMMs: the profile's GEMM
//   count over one micro-step's (when it divides; 1 otherwise).
//   - in-order: when the profile has exactly R x n kernels of the kind, n being one micro-step's
//     in the trace, the i-th profiled kernel of the kind times the (i mod n)-th kernel of the kind
//     in the trace's program order.  A kernel of the trace is one entry of a kernel list, which
//     every op of identical layers shares (trace.hpp): it takes the mean of the durations matched
//     to all its launches (every block's QKV GEMM, say, the mean of the blocks' measured QKV GEMMs).
//   - scaled: when the counts differ (PyTorch launches more, unfused elementwise kernels than the
//     few luwusim models), the kind's measured time per micro-batch (its total over R) is shared
//     out over the trace's kernels of the kind in proportion to their work: FLOPs for GEMMs and
//     attention, bytes for elementwise kernels (what the analytic model's time is proportional to).
//   - analytic: a kind the profile has none of keeps the GPU model's times.
// A kernel given a measured time takes it on any GPU (sim/engine/op_timing.hpp): a profile is of
// one GPU, which the scenario's should be.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "workloads/kernel_profile.hpp"
#include "workloads/trace.hpp"

namespace luwu::workloads {

enum class MatchRule { InOrder, Scaled, Analytic };
std::string to_string(MatchRule);

struct KindMatch {
  ProfiledKind kind = ProfiledKind::Gemm;
  std::size_t profiled = 0;        // kernels of the kind in the profile
  std::size_t per_micro_step = 0;  // kernels of the kind one micro-step of the trace launches
  MatchRule rule = MatchRule::Analytic;
  double measured_s_per_micro_step = 0;  // the profile's time of the kind over R
};

struct KernelTimesReport {
  std::string file;
  std::size_t repetitions = 1;               // R: micro-batches the profile covers
  std::vector<KindMatch> kinds;              // gemm, attention, elementwise
  std::size_t excluded_communication = 0;    // communication kernels of the profile, not used
  std::size_t on_communication_streams = 0;  //   of which so by their stream, not their name
  std::size_t excluded_optimizer = 0;        // optimizer kernels of the profile, not used
  std::size_t excluded_copies = 0;           // memcpy and memset kernels, not used
  std::string device_name;                   // the profile's GPU, as it names it ("" if not)
  int profiler_steps = 0;                    // ProfilerStep# marks (0: the profile used whole)
  int step_used = -1;                        // the step whose kernels were used
  bool median_step = false;                  // chosen as the median step
  std::size_t kernels_in_other_steps = 0;    // left out with the other steps
  std::string scaled_from;                   // a profile of another GPU, scaled from it (sim's device check)
  std::uint64_t measured_launches = 0;       // kernel launches of the iteration that take a measured time
  std::uint64_t analytic_launches = 0;       // that keep the analytic model's
};

// An InputError at the first of the profile's host matrix multiplies (KernelProfile::gemm_ops)
// whose dimensions, in any order, are none of the trace's GEMM and attention kernels': a profile of
// another model or batch.
void check_gemm_shapes(const Trace& trace, const KernelProfile& profile);
// Sets Kernel::measured_s of the trace's kernels by the rule above, after check_gemm_shapes.
KernelTimesReport apply_kernel_times(Trace& trace, const KernelProfile& profile);

luwu::Json kernel_times_to_json(const KernelTimesReport& report);
// One line: "kernel times from F: 1,234 of 1,300 kernel launches measured (gemm in-order 146/146, ...)".
std::string kernel_times_summary(const KernelTimesReport& report);

}  // namespace luwu::workloads
