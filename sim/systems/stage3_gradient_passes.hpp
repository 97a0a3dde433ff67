#pragma once
// The GPU's own passes over the gradients around each reduce-scatter in DeepSpeed 0.9.3's stage 3
// (stage3.py, comm/coalesced_collectives.py), which ZeRO-3 and ZeRO-Infinity share.  All run on
// the reduce-and-partition stream, so each reduce-scatter waits for the passes before it and the
// copies after it wait for the passes after it; all are elementwise, so HBM-bound.  Per gradient
// tensor of n elements of e bytes (a sub-module's parameters here, in backward order):
// - before the reduce-scatter, over the full gradient:
//   * __add_grad_to_ipg_bucket, with contiguous_gradients (default true): the gradient is copied
//     into the bucket's flat buffer (2 e n) if it fits beside what the bucket holds (elements in
//     the bucket + n < reduce_bucket_size); a bucket that would overflow is reduced first;
//   * reduce_scatter_coalesced: the bucket's tensors interleaved rank by rank into one flat buffer
//     by torch.cat (2 e n), unless the bucket is one tensor of a multiple of the world size
//     elements, then the pre-divide div_(world) (2 e n);
// - after it, over the rank's partition of the gradient (n / world elements), partition_grads:
//   * isinf(g).any() and isnan(g).any(): each reads the partition and writes and reads a bool
//     tensor (2 (e + 2));
//   * on the GPU (ZeRO-3): the partition copied into the rank's gradient partition, or, from the
//     second micro-step on, added to it (2 e, 3 e);
//   * offloaded (ZeRO-Infinity): from the second micro-step on, the host's partition, brought back,
//     is added to on the GPU (3 e); at the accumulation boundary, the fp64 norm for clipping
//     (_constant_buffered_norm2: .double() reads e and writes 8, norm reads 8) and .float() for the
//     fp32 copy to the host (reads e, writes 4; nothing at fp32, where .float() is the tensor).
#include <cstddef>
#include <string>
#include <vector>

#include "sim/engine/stream.hpp"
#include "sim/systems/schedule.hpp"
#include "sim/systems/system_entry.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

struct Stage3GradientSettings {
  // "gradient_passes": false leaves the passes out, an ablation (a runtime that reduces each
  // gradient where autograd wrote it); DeepSpeed runs them.
  bool enabled = true;
  double reduce_bucket_size = 5e8;   // elements, zero_optimization.reduce_bucket_size (DeepSpeed's default)
  bool contiguous_gradients = true;  // zero_optimization.contiguous_gradients (DeepSpeed's default)

  static std::vector<std::string> keys() { return {"gradient_passes", "reduce_bucket_size", "contiguous_gradients"}; }
  static Stage3GradientSettings parse(const SystemEntry& entry);
};

// HBM bytes of the passes before each op's reduce-scatter: [op index] over trace.ops, 0 for ops
// without gradients (and for every op with the passes off).  Buckets fill across a micro-step's
// Backward ops in order and are emptied at its end (independent_gradient_partition_epilogue); a
// tensor's interleave and pre-divide are charged to its own op.  `interleave`: false where the reduction replaces reduce_scatter_coalesced
// (ZeRO++'s quantized gradients), which leaves the bucket copy only.
std::vector<double> stage3_bucket_pass_bytes(const workloads::Trace& trace, const Stage3GradientSettings& settings,
                                             int world, bool interleave = true);

// HBM bytes per element of a rank's gradient partition after the reduce-scatter (see above).
double stage3_partition_pass_bytes_per_element(double element_bytes, bool offloaded, int micro_step, bool boundary);
// The same, 0 with the passes off.
inline double stage3_partition_pass_bytes_per_element(const Stage3GradientSettings& settings, double element_bytes,
                                                      bool offloaded, int micro_step, bool boundary) {
  return settings.enabled ? stage3_partition_pass_bytes_per_element(element_bytes, offloaded, micro_step, boundary) : 0;
}

// One rank's passes on its reduce-and-partition stream (the timeline's track of that name), for a
// schedule that reduce-scatters each Backward op's gradient over `world` ranks: the bucket's
// passes before the reduce-scatter, the partition's after it.
class Stage3GradientPasses {
 public:
  Stage3GradientPasses(RankEnv& env, const Stage3GradientSettings& settings, int world, bool offloaded,
                       bool interleave = true);
  // Op i's bucket passes: what its reduce-scatter must wait for (empty when there are none).
  std::vector<CompletionPtr> before_reduce(std::size_t i, const std::string& label);
  // Op i's partition passes after `reduced`: their completion, `reduced` itself when there are none.
  CompletionPtr after_reduce(std::size_t i, const CompletionPtr& reduced, const std::string& label);

 private:
  RankEnv& env_;
  Stage3GradientSettings settings_;
  int world_;
  bool offloaded_;
  std::vector<double> bucket_bytes_;
  Stream stream_;
};

}  // namespace luwu::sim
