#pragma once
// How one worker trains for one iteration: micro-batch, sequence length, gradient accumulation,
// activation recomputation and the element type of parameters, gradients and activations.
#include <stdexcept>
#include <string>

#include "common/choice.hpp"

namespace luwu::workloads {

enum class DType { Fp16, Bf16, Fp32 };

inline int bytes_per_element(DType t) { return t == DType::Fp32 ? 4 : 2; }

inline std::string to_string(DType t) {
  switch (t) {
    case DType::Fp16: return "fp16";
    case DType::Bf16: return "bf16";
    case DType::Fp32: return "fp32";
  }
  return "?";
}

// The element types by name, in the order error messages list them.
inline const Choices<DType>& dtype_choices() {
  static const Choices<DType> choices = choices_by_name({DType::Fp16, DType::Bf16, DType::Fp32});
  return choices;
}

// "fp16", "bf16" or "fp32"; anything else is std::invalid_argument (common/choice.hpp's message).
inline DType parse_dtype(const std::string& text) { return choose(text, dtype_choices(), "dtype"); }

// Which kernels an unfused attention runs over its a x s x s scores between Q K^T and scores x V.
// - Passes: attention_score_passes streaming passes, each reading and writing the scores once
//   (backward: reading two and writing one), one of them the softmax's row reduction: a fused
//   scale-mask-softmax (Megatron-LM: 2 with the attention dropout).
// - HuggingFaceOpt: eager PyTorch running transformers 4.2x's OPTAttention in bf16 (what
//   DeepSpeed 0.9.3's users ran OPT with): the causal mask added (`+ attention_mask`, a
//   [b, 1, s, s] tensor broadcast over the heads), the clamp `torch.max(w, torch.tensor(finfo.min,
//   device=...))` against a 0-dim tensor, and the softmax (the dropout at OPT's attention_dropout 0
//   is skipped).  The add and the clamp have a broadcast operand, so PyTorch's TensorIterator runs
//   them in its non-vectorized kernel.  Backward, from PyTorch's derivatives.yaml: the softmax's
//   backward (reads its output and the gradient, writes one); maximum's
//   `where(self == other, grad / 2, grad).masked_fill_(self < other, 0)`, five kernels, the two
//   comparisons against the 0-dim tensor non-vectorized; the add passes the gradient through.
// - MaskedFill: `scores.masked_fill(mask, -inf)` with a [s, s] boolean mask, then the softmax
//   (GPT-style eager code, and bench/gpu_block.py's unfused block): the out-of-place fill clones the
//   scores and fills the copy in place in the non-vectorized kernel; its backward,
//   `grad.masked_fill(mask, 0)`, does the same to the gradient.
enum class AttentionScores { Passes, HuggingFaceOpt, MaskedFill };

inline std::string to_string(AttentionScores a) {
  switch (a) {
    case AttentionScores::Passes: return "passes";
    case AttentionScores::HuggingFaceOpt: return "hugging-face-opt";
    case AttentionScores::MaskedFill: return "masked-fill";
  }
  return "?";
}

inline const Choices<AttentionScores>& attention_scores_choices() {
  static const Choices<AttentionScores> choices =
      choices_by_name({AttentionScores::Passes, AttentionScores::HuggingFaceOpt, AttentionScores::MaskedFill});
  return choices;
}

// The largest settings luwusim accepts, from JSON (training_from_json) and from the command line
// (validate_training), so that whatever it writes it reads back.
inline constexpr int kMaxMicroBatch = 1 << 20;
inline constexpr int kMaxSeqLen = 1 << 24;
inline constexpr int kMaxGradAccum = 1 << 20;
inline constexpr int kMaxAttentionScorePasses = 16;
inline constexpr int kMaxAttentionLayoutCopies = 16;
inline constexpr double kMaxExpertCapacityFactor = 64;

struct TrainingConfig {
  int micro_batch = 1;   // sequences per micro-batch on one worker
  int seq_len = 2048;    // tokens per sequence
  int grad_accum = 1;    // micro-batches per iteration on one worker
  bool recompute = false;  // full activation checkpointing: keep only each block's input
  DType dtype = DType::Fp16;
  // Attention without materialized a x s x s scores (FlashAttention, Dao et al. 2022, arXiv
  // 2205.14135): the 5*a*s^2*b activation bytes vanish and backward recomputes Q K^T
  // (2*b*s^2*h more FLOPs per block, Algorithm 4 of that paper).  Off: Megatron-style attention as
  // in Korthikanti et al. 2022.
  bool memory_efficient_attention = false;
  // Without it, the elementwise passes over the a x s x s scores between Q K^T and the scores x V
  // GEMMs, each reading and writing them once (backward: reading two and writing one).  2:
  // Megatron-LM's fused scale-mask-softmax and the attention dropout; Hugging Face's OPTAttention
  // (transformers 4.2x) makes 3: the mask add, the clamp at finfo.min and the softmax (OPT's
  // attention dropout is 0, which PyTorch skips).  Ignored with memory-efficient attention.
  int attention_score_passes = 2;
  // The kernels over the scores (see AttentionScores): "passes" counts attention_score_passes;
  // the others are the kernels a framework's code launches, counted from it.
  AttentionScores attention_scores = AttentionScores::Passes;
  // Without it, the copies of T x h/t tensors an unfused attention makes beside its GEMMs, each
  // reading and writing one (backward: as many).  0: Megatron-LM's batched GEMMs read the heads
  // strided.  Hugging Face's OPTAttention (transformers 4.2x) makes 5: q_proj's output scaled
  // (`* self.scaling`), q, k and v made contiguous per head (`_shape`: view, transpose(1, 2),
  // contiguous) and the context reshaped back (transpose(1, 2), reshape).  Ignored with
  // memory-efficient attention.
  int attention_layout_copies = 0;
  // Mixture-of-experts models only: the rows each expert's GEMMs run, as a multiple of the balanced
  // share T x experts_per_token / experts.  1: routing assumed balanced and no token padded or
  // dropped (dropless MoE, e.g. MegaBlocks); c > 1: a fixed expert capacity of c times the share,
  // padded (GShard's and DeepSpeed-MoE's capacity factor, 1.0-1.25 in their papers).  No paper
  // luwusim follows pins the load imbalance, so this is the named assumption.
  double expert_capacity_factor = 1.0;

  bool operator==(const TrainingConfig&) const = default;
};

}  // namespace luwu::workloads
