#pragma once
// The order in which one pipeline stage runs the forward and backward passes of an iteration's
// micro-batches, stage s of p, m micro-batches:
// - GPipe (Huang et al. 2019, arXiv 1811.06965): the m forwards, then the m backwards; every
//   stage holds the activations of all m micro-batches at the turn.
// - 1F1B, PipeDream-Flush (Narayanan et al. 2021, arXiv 2104.04473, section 2.2.1; Megatron-LM's
//   forward_backward_pipelining_without_interleaving): min(p - s - 1, m) warm-up forwards, then
//   one forward and one backward in turn until every forward ran, then the remaining backwards.
//   Stage s holds at most min(p - s, m) micro-batches' activations.
// Backwards run in micro-batch order in both.
#include <algorithm>
#include <vector>

#include "workloads/parallel_layout.hpp"

namespace luwu::workloads {

struct PipelineStep {
  bool forward = true;  // false: the micro-batch's backward
  int micro_batch = 0;

  bool operator==(const PipelineStep&) const = default;
};

inline int warmup_forwards(int stages, int stage, int micro_batches) {
  return std::min(stages - stage - 1, micro_batches);
}

inline std::vector<PipelineStep> pipeline_steps(PipelineSchedule schedule, int stages, int stage, int micro_batches) {
  std::vector<PipelineStep> steps;
  steps.reserve(2 * static_cast<std::size_t>(micro_batches));
  if (schedule == PipelineSchedule::GPipe) {
    for (int i = 0; i < micro_batches; ++i) steps.push_back({true, i});
    for (int i = 0; i < micro_batches; ++i) steps.push_back({false, i});
    return steps;
  }
  const int warmup = warmup_forwards(stages, stage, micro_batches);
  for (int i = 0; i < warmup; ++i) steps.push_back({true, i});
  for (int i = 0; i + warmup < micro_batches; ++i) {
    steps.push_back({true, warmup + i});
    steps.push_back({false, i});
  }
  for (int i = micro_batches - warmup; i < micro_batches; ++i) steps.push_back({false, i});
  return steps;
}

}  // namespace luwu::workloads
