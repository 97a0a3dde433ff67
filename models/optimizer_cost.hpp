#pragma once
// What an optimizer step costs per parameter: bytes read, bytes written, FLOPs.  With the bandwidth
// of the tier holding the state and the processor's FLOP/s, an update's time follows.
//
// Mixed-precision Adam (fp16 grad in, fp32 master/m/v updated in place, fp16 param out):
//   read    = grad 2 + master 4 + m 4 + v 4                 = 14 B/param
//   written = master 4 + m 4 + v 4 + fp16 param 2          = 14 B/param
// That reads the 16-bit gradient in the kernel and widens it in registers (GradientConversion::
// in_kernel: luwusim's validation kernel).  Where the gradient becomes fp32 matters:
//   on_gpu : DeepSpeed ZeRO-Offload/-Infinity call .float() on the GPU before the copy to host
//            (stage_1_and_2.py async_inplace_copy_grad_to_fp32_buffer_from_gpu; stage3.py
//            partition_grads), and cpu_adam takes gradients of its fp32 parameters' dtype
//            (cpu_adam_impl.cpp ds_adam_step): the kernel reads a 4 B gradient, read = 16 B/param.
//   on_cpu : a CPU pass first (PyTorch's blocking copy_ of a 16-bit GPU tensor into an fp32 host
//            tensor converts on the CPU): it reads 2 and writes 4, then the kernel reads the 4:
//            read = 2 + 4 + 12 = 18, written = 4 + 14 = 18 B/param.
// Written-but-unread bytes (bytes_written_unread_per_param): stores to lines the step has not
// read, i.e. the 16-bit copy-out (2 B) and an on_cpu converted gradient (4 B).  With ordinary
// stores the CPU reads each such line for ownership first (write-allocate); the host profile says
// what share does (models/host.hpp).  Master, m and v are rewritten where they were just read: no
// extra read.
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
  double bytes_written_unread_per_param = 0;  // part of bytes_written to lines not read by the step
};

// Where a 16-bit gradient is widened to the state's precision (see above).
enum class GradientConversion {
  in_kernel,  // the optimizer kernel reads grad_bytes and converts in registers
  on_gpu,     // converted before the copy to host: the kernel reads state_bytes
  on_cpu,     // a separate CPU pass reads grad_bytes and writes state_bytes, the kernel reads those
};

// Byte sizes of what an optimizer step touches.
struct OptimizerPrecision {
  double grad_bytes = 2;                 // gradient as it arrives (fp16/bf16 = 2, fp32 = 4)
  double state_bytes = 4;                // master param and each optimizer moment (fp32)
  double low_precision_param_bytes = 2;  // the fp16/bf16 copy written out; 0 = none (pure fp32)
  GradientConversion grad_conversion = GradientConversion::in_kernel;
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
