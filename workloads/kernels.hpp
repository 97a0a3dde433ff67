#pragma once
// The GPU kernels an op launches, in launch order: what the simulator replays on the compute
// stream, one kernel at a time, so that a collective waiting for SMs can start only at a kernel
// boundary (sim/engine/gpu_device.hpp).
//
// A transformer block's forward (and its recompute), T = micro_batch x seq_len tokens, elements
// of `e` bytes (the training dtype):
//   attention-norm  elementwise  LayerNorm/RMSNorm: reads and writes T x h
//   qkv             GEMM         T x h by h x (h + 2 kv); with separate projections
//                                (ModelConfig::separate_qkv) three GEMMs, q (h x h), k and v (h x kv)
//   attention       fused (memory-efficient): one attention kernel, 4 b s^2 h FLOPs (the
//                   accounting's), moving Q, K, V and its output.  Unfused, as PyTorch runs it:
//     attention-layout   elementwise   attention_layout_copies copies of T x h tensors (HF's q
//                                      scaling, per-head transposes), each read and written once
//     attention-scores   batched GEMM  Q K^T, a b GEMMs of s x d_head by d_head x s
//     attention-softmax  elementwise   attention_score_passes passes over the a b s^2 scores, each
//                                      reading and writing them (mask, softmax, dropout); or, as
//                                      a framework runs them (TrainingConfig::attention_scores):
//                                      Hugging Face OPT's attention-mask-add and attention-clamp
//                                      (broadcast operands) before the softmax, or a masked fill
//                                      (attention-mask-fill: a clone and the fill) before it
//     attention-context  batched GEMM  scores x V, a b GEMMs of s x s by s x d_head
//   attention-out   GEMM         T x h by h x h
//   ffn-norm        elementwise  dropout + residual add + norm: 5 T x h elements
//   ffn-up          GEMM         T x h by h x f (SwiGLU: h x 2f, gate and up in one GEMM)
//   activation      elementwise  GELU reads and writes T x f (SwiGLU: reads 2, writes 1)
//   ffn-down        GEMM         T x f by f x h
//   residual        elementwise  dropout + residual add: 3 T x h elements
// A mixture of experts (E experts, top-k, R = expert_rows() rows per expert) runs, in place of
// ffn-up, activation and ffn-down:
//   router          GEMM         T x h by h x E
//   router-topk     elementwise  reads the T x E scores, writes k indices and weights per token
//   dispatch        elementwise  reads T x h, writes the E R x h expert inputs
//   experts-up      batched GEMM E GEMMs of R x h by h x f (SwiGLU: 2f)
//   activation      elementwise  over E R x f
//   experts-down    batched GEMM E GEMMs of R x f by f x h
//   combine         elementwise  reads the E R x h expert outputs, writes T x h
// each expert f = expert_width() wide; with shared experts (DeepSeekMoE) then, on all T tokens:
//   shared-experts-up GEMM T x h by h x fs (fs = shared_experts x expert width; SwiGLU: 2 fs),
//   shared-activation, shared-experts-down GEMM T x fs by fs x h, and shared-add (3 T x h elements).
// A mixture's dense blocks (dense_layers) run the dense FFN above.
// Backward runs them in reverse; each GEMM C = A B becomes two of equal FLOPs, the input gradient
// dA = dC B^T (T x n by n x k) and the weight gradient dB = A^T dC (k x T by T x n); attention's
// backward has twice its forward FLOPs (plus Q K^T once more when memory-efficient, as the
// accounting counts) and moves twice its bytes; the score passes' backward reads two tensors and
// writes one per pass (a framework's score kernels: the backward its autograd runs, kernels.cpp
// score_kernel_backward); any other elementwise kernel's backward moves twice its forward's bytes.
// Row reductions (Kernel::reduction_bytes): attention-norm and final-norm whole, ffn-norm's norm
// (2 of its 5 passes: the other 3 are the residual add before it), the softmax pass of the
// score passes (1 of them); their backward scales them as it scales the kernel.  The embedding is a gather forward and a scatter-add backward (3 T x h
// elements, no FLOPs); the head is the final norm, the LM-head GEMM T x h by h x V and the fused
// cross entropy, which reads and writes the fp32 logits (4 T V bytes each way).
// Sub-modules with parameters (Kernel::params): the two norms (gain, and bias for LayerNorm), QKV (or q, k, v),
// attention-out, FFN up and down (matrix + bias where the model has biases; every expert's, and
// the router), the embedding table
// (with learned positions), the final norm and the LM-head matrix (tied or not: the head uses it).
// Modules without parameters of their own (Kernel::parameterless_modules), as Hugging Face's
// transformers builds a decoder (OPTDecoderLayer, LlamaDecoderLayer): the block, the attention
// module (q/k/v and output projections inside), the activation module, with SwiGLU the MLP module
// (gate/up and down inside), a mixture's sparse-MoE module (router to combine), and above the
// blocks the causal-LM, model and decoder modules (embedding to head).  A module's forward begins
// at its first kernel; its backward at the backward of its last kernel (autograd reaches its
// output first), so it counts there, before any module inside it.
// The FLOPs of an op's kernels sum to the op's FLOPs (layer_accounting.hpp counts the same
// matrix multiplies); elementwise kernels add memory traffic the FLOP count leaves out.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/layer_accounting.hpp"
#include "workloads/model_config.hpp"
#include "workloads/training_config.hpp"

namespace luwu::workloads {

enum class KernelKind { Gemm, Attention, Elementwise };
std::string to_string(KernelKind);

// C[m x n] = A[m x k] B[k x n], in elements; `batch` such GEMMs in one kernel (a batched GEMM).
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;

  bool operator==(const GemmShape&) const = default;
};

// A measured kernel time above this is not a measurement (a trace file's measured_s, a Chakra
// node's duration): refused where it is read.
inline constexpr double kMaxMeasuredKernelSeconds = 3600;

struct Kernel {
  std::string name;
  KernelKind kind = KernelKind::Gemm;
  double flops = 0;               // matrix-multiply FLOPs, 2 per multiply-add
  double bytes = 0;               // HBM bytes read plus written, minimal traffic
  // Of `bytes`, what a row reduction moves (the norms, the softmax over the attention scores):
  // such kernels reach a lower share of HBM than a stream (GpuSpec::row_reduction_hbm_efficiency).
  double reduction_bytes = 0;
  // Of `bytes`, what runs in PyTorch's non-vectorized elementwise kernel because an operand is
  // broadcast (an attention mask over every head, a 0-dim tensor): GpuSpec::broadcast_hbm_efficiency.
  double broadcast_bytes = 0;
  double output_elements = 0;     // elements it writes: its parallelism (how many SMs it can fill)
  GemmShape gemm{};               // GEMMs only (zero otherwise)
  // Parameters (elements) of the sub-module whose use this kernel begins: its weights must be on
  // the GPU before it runs (ZeRO-3 gathers them here).  The first kernel of a module in the op's
  // order carries them (forward: the GEMM or norm; backward: the input-gradient GEMM, whose weight
  // gradient follows); 0 for every other kernel.  An op's kernels carry the parameters it uses.
  std::uint64_t params = 0;
  // Modules without parameters of their own whose forward (backward, in a Backward op) begins
  // right before this kernel, outside the module whose parameters it carries.  A framework that
  // hooks every module (DeepSpeed's stage 3) runs a hook for each here, as for a module with
  // parameters.
  int parameterless_modules = 0;
  // A measured duration (seconds) that replaces the analytic time (sim/engine/op_timing.hpp);
  // 0: none, the GPU model times the kernel.  Set from a profile (workloads/kernel_times.hpp) or
  // read from a trace file.
  double measured_s = 0;

  bool operator==(const Kernel&) const = default;
};

// Compute ops (Forward, Recompute, Backward) launch kernels.  The others are communication of one
// GPU of a tensor- and pipeline-parallel layout (workloads/stage_trace.hpp) and launch none here:
// - TensorAllReduce, TensorReduceScatter, TensorAllGather: a collective over the GPU's
//   tensor-parallel group, of the whole buffer (an all-gather's output, a reduce-scatter's input).
// - SendActivation / RecvActivation: a forward activation to the next pipeline stage / from the
//   previous one; SendGradient / RecvGradient: its gradient to the previous stage / from the next.
// - ExpertAllToAll: a mixture's dispatch or combine over the GPU's expert-parallel group
//   (tensor_collectives.hpp), of this GPU's whole buffer.
enum class OpKind {
  Forward,
  Recompute,
  Backward,
  TensorAllReduce,
  TensorReduceScatter,
  TensorAllGather,
  SendActivation,
  RecvActivation,
  SendGradient,
  RecvGradient,
  ExpertAllToAll
};
std::string to_string(OpKind);
inline bool is_compute(OpKind k) { return k == OpKind::Forward || k == OpKind::Recompute || k == OpKind::Backward; }
inline bool is_tensor_collective(OpKind k) {
  return k == OpKind::TensorAllReduce || k == OpKind::TensorReduceScatter || k == OpKind::TensorAllGather;
}
inline bool is_pipeline_transfer(OpKind k) {
  return k == OpKind::SendActivation || k == OpKind::RecvActivation || k == OpKind::SendGradient || k == OpKind::RecvGradient;
}

// The kernels of one op of a layer of that kind (Recompute launches Forward's kernels), on one GPU
// of a tensor-parallel group (tensor_sharding.hpp; the default is the whole layer): GEMMs and
// attention split as the accounting splits them, norms and residual kernels on T tokens, or T / t
// with sequence parallelism.  Communication ops have no kernels here.
std::vector<Kernel> layer_kernels(const ModelConfig& model, const TrainingConfig& training, LayerKind layer,
                                  OpKind op, const TensorSharding& sharding = {});

}  // namespace luwu::workloads
