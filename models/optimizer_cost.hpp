#pragma once
// What an optimizer step costs per parameter: bytes read, bytes written, FLOPs.  With the bandwidth
// of the tier holding the state and the processor's FLOP/s, an update's time follows.
//
// Mixed-precision Adam (fp16 grad in, fp32 master/m/v updated in place, fp16 param out):
//   read    = grad 2 + master 4 + m 4 + v 4                 = 14 B/param
//   written = master 4 + m 4 + v 4 + fp16 param 2          = 14 B/param
// Pure fp32 Adam (grad_bytes 4, no low-precision copy): read 16, written 12 = 28 B/param.
// FLOPs (counted per element): grad unscale 1; m = b1 m + (1-b1) g: 3; v = b2 v + (1-b2) g^2: 4;
// bias corrections m/(1-b1^t), v/(1-b2^t): 2; p -= lr * m_hat / (sqrt(v_hat) + eps): 5  -> 15;
// AdamW's decoupled weight decay p -= lr * wd * p adds 2 -> 17.
// SGD with momentum (mixed precision): read grad 2 + master 4 + momentum 4 = 10, written master 4 +
// momentum 4 + fp16 param 2 = 10; FLOPs: unscale 1; buf = mu buf + g: 2; p -= lr buf: 2 -> 5
// (+2 with weight decay).

namespace luwu::models {

struct OptimizerCost {
  double bytes_read_per_param = 0;
  double bytes_written_per_param = 0;
  double flops_per_param = 0;
  double state_bytes_per_param = 0;  // persistent state (master param and moments), read and written back
};

// Byte sizes of what an optimizer step touches.
struct OptimizerPrecision {
  double grad_bytes = 2;                 // gradient as it arrives (fp16/bf16 = 2, fp32 = 4)
  double state_bytes = 4;                // master param and each optimizer moment (fp32)
  double low_precision_param_bytes = 2;  // the fp16/bf16 copy written out; 0 = none (pure fp32)
};

OptimizerCost adam_mixed_precision_cost(const OptimizerPrecision& precision = {}, bool decoupled_weight_decay = false);
OptimizerCost sgd_momentum_cost(const OptimizerPrecision& precision = {}, bool weight_decay = false);

// Time to update `params` parameters whose state streams from a tier reading at read_Bps and
// writing at write_Bps, on a processor of flops_per_s:
//   time = max(params * (bytes_read / read_Bps + bytes_written / write_Bps),
//              params * flops / flops_per_s)
// Reads and writes add up because they share the tier's channel (one DRAM bus, one SSD's flash);
// for DRAM pass the same achieved (read-modify-write) bandwidth for both.  Memory and compute
// overlap (streaming), hence the max.  All rates must be positive.
double optimizer_update_time_s(double params, const OptimizerCost& cost, double read_Bps, double write_Bps,
                               double flops_per_s);

}  // namespace luwu::models
