#pragma once
// Synthetic traces for closed-form tests of the schedules: L transformer layers of `params`
// parameters each, fp16, one micro-batch per step unless said otherwise; every op `flops`.
#include <cstdint>
#include <string>

#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

inline luwu::workloads::Trace synthetic_trace(int layers, std::uint64_t params, double flops, int grad_accum = 1) {
  using luwu::workloads::OpKind;
  luwu::workloads::Trace t;
  t.model = *luwu::workloads::find_catalog_model("gpt3-1.3b");
  t.training.micro_batch = 1;
  t.training.seq_len = 2048;
  t.training.grad_accum = grad_accum;
  for (int l = 0; l < layers; ++l) {
    luwu::workloads::LayerInfo info;
    info.name = "block_" + std::to_string(l);
    info.params = info.params_used = params;
    info.forward_flops = info.backward_flops = flops;
    t.layers.push_back(info);
  }
  for (int m = 0; m < grad_accum; ++m) {
    for (int l = 0; l < layers; ++l) t.ops.push_back({OpKind::Forward, l, m, flops, 2 * params, 0, 0, 0});
    for (int l = layers - 1; l >= 0; --l) t.ops.push_back({OpKind::Backward, l, m, flops, 2 * params, 2 * params, 0, 0});
  }
  return t;
}
