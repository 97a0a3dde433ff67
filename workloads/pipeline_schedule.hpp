#pragma once
// The order in which one pipeline stage runs the forward and backward passes of an iteration's
// micro-batches, stage s of p, m micro-batches:
// - GPipe (Huang et al. 2019, arXiv 1811.06965): the m forwards, then the m backwards; every
//   stage holds the activations of all m micro-batches at the turn.
// - 1F1B, PipeDream-Flush (Narayanan et al. 2021, arXiv 2104.04473, section 2.2.1; Megatron-LM's
//   forward_backward_pipelining_without_interleaving): min(p - s - 1, m) warm-up forwards, then
//   one forward and one backward in turn until every forward ran, then the remaining backwards.
//   Stage s holds at most min(p - s, m) micro-batches' activations.
// - Interleaved 1F1B (Narayanan et al. 2021 section 2.2.2; Megatron-LM's
//   forward_backward_pipelining_with_interleaving), v model chunks per stage: the m x v
//   forward and backward passes of (chunk, micro-batch) pairs in groups of p micro-batches, the
//   k-th forward on chunk (k mod pv) / p, the k-th backward on chunk v - 1 - (k mod pv) / p, each of
//   micro-batch (k / pv) p + k mod p; min(2 (p - s - 1) + (v - 1) p, mv) warm-up forwards (all mv
//   when m = p), then one forward and one backward in turn, then the remaining backwards.  With no
//   communication time its bubble is (p - 1) / v of a micro-batch's forward and backward over the
//   stage's chunks, 1F1B's divided by v.
// Backwards run in micro-batch order in all of them.
#include <algorithm>
#include <vector>

#include "workloads/parallel_layout.hpp"

namespace luwu::workloads {

struct PipelineStep {
  bool forward = true;  // false: the micro-batch's backward
  int micro_batch = 0;
  int chunk = 0;  // the model chunk (interleaved), 0 otherwise

  bool operator==(const PipelineStep&) const = default;
};

inline int warmup_forwards(int stages, int stage, int micro_batches) {
  return std::min(stages - stage - 1, micro_batches);
}

// Interleaved, `chunks` > 1 (micro_batches a multiple of stages, as Megatron-LM requires).
inline std::vector<PipelineStep> interleaved_pipeline_steps(int stages, int stage, int micro_batches, int chunks) {
  const int group = stages * chunks, total = micro_batches * chunks;
  const int warmup = micro_batches == stages ? total : std::min(2 * (stages - stage - 1) + (chunks - 1) * stages, total);
  auto step = [&](int k, bool forward) {
    const int in_group = (k % group) / stages;
    return PipelineStep{forward, (k / group) * stages + k % stages, forward ? in_group : chunks - 1 - in_group};
  };
  std::vector<PipelineStep> steps;
  steps.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) steps.push_back(step(k, true));
  for (int i = 0; i + warmup < total; ++i) {
    steps.push_back(step(warmup + i, true));
    steps.push_back(step(i, false));
  }
  for (int k = total - warmup; k < total; ++k) steps.push_back(step(k, false));
  return steps;
}

inline std::vector<PipelineStep> pipeline_steps(PipelineSchedule schedule, int stages, int stage, int micro_batches,
                                                int chunks = 1) {
  if (chunks > 1) return interleaved_pipeline_steps(stages, stage, micro_batches, chunks);
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
