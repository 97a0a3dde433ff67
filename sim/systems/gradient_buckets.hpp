#pragma once
// Gradient bucketing, as PyTorch DDP's reducer and DeepSpeed's reduce buckets do it: backward hands
// each layer's gradient to the open bucket; the bucket goes out (all-reduce, reduce-scatter,
// in-switch aggregation) once it holds `bucket_bytes`, and a micro-batch's last gradients go out
// after its last op without waiting for a full bucket.
#include <cstddef>
#include <vector>

#include "workloads/trace.hpp"

namespace luwu::sim {

struct GradientBucket {
  int index = 0;            // in issue order, over the whole iteration
  std::size_t after_op = 0;  // the op after whose compute the bucket goes out
  int micro_step = 0;
  double bytes = 0;         // gradient bytes, in the training dtype
};

// Which micro-batches' gradients are communicated: only the last one's (DDP's no_sync: earlier
// micro-batches accumulate locally), or every one's (ZeRO reduce-scatters each into the shard).
enum class BucketedMicroSteps { Last, Every };

// Which parameters' gradients: all, or with expert parallelism those reduced over the whole
// data-parallel group (every parameter but the routed experts') or the experts' (reduced over the
// ranks holding the same experts), LayerInfo::expert_params.
enum class GradientPart { All, NonExpert, Expert };

inline double gradient_part_bytes(const workloads::Trace& trace, const workloads::TraceOp& op, GradientPart part) {
  const double all = static_cast<double>(op.grad_bytes);
  if (part == GradientPart::All || all <= 0) return all;
  const double experts = static_cast<double>(trace.layers.at(static_cast<std::size_t>(op.layer)).expert_params) *
                         static_cast<double>(workloads::bytes_per_element(trace.training.dtype));
  return part == GradientPart::Expert ? experts : all - experts;
}

inline std::vector<GradientBucket> plan_gradient_buckets(const workloads::Trace& trace, double bucket_bytes,
                                                         BucketedMicroSteps which, GradientPart part = GradientPart::All) {
  std::vector<GradientBucket> buckets;
  const auto& ops = trace.ops;
  const int last_micro_step = trace.training.grad_accum - 1;
  double filling = 0;
  auto close = [&](std::size_t i) {
    if (filling <= 0) return;
    buckets.push_back({static_cast<int>(buckets.size()), i, ops[i].micro_step, filling});
    filling = 0;
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const bool communicated = which == BucketedMicroSteps::Every || op.micro_step == last_micro_step;
    if (communicated && op.kind == workloads::OpKind::Backward && op.grad_bytes > 0) {
      filling += gradient_part_bytes(trace, op, part);
      if (filling >= bucket_bytes) close(i);
    }
    if (i + 1 == ops.size() || ops[i + 1].micro_step != op.micro_step) close(i);
  }
  return buckets;
}

}  // namespace luwu::sim
