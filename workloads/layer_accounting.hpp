#pragma once
// Per-layer accounting of a transformer for one micro-batch: parameters, forward and backward
// FLOPs, and the activation bytes kept for the backward pass.
//
// Layers, in execution order: 0 = embedding, 1..L = transformer blocks, L+1 = head (final norm
// and LM head).  Conventions, stated once:
// - FLOPs count the matrix multiplies only, 2 FLOPs per multiply-add, as Megatron-LM does
//   (Narayanan et al. 2021, appendix): per block 2*T*(weight matrix entries) + 4*b*s^2*h for
//   Q K^T and attention x V (T = b*s tokens, no causal-mask saving); the head 2*T*h*V; the
//   embedding lookup 0.  Bias adds, norms, softmax and activations are not counted.
//   Backward = 2 x forward (gradients of inputs and of weights); with memory-efficient attention
//   backward also recomputes Q K^T, 2*b*s^2*h FLOPs.
// - Activation bytes follow Korthikanti et al. 2022 ("Reducing activation recomputation in large
//   transformer models", section 4.1): s*b*h*(34 + 5*a*s/h) bytes per GPT block at 16-bit,
//   generalized here to kv_heads, ffn_hidden and SwiGLU (three f-wide tensors instead of GELU's
//   two); 1-byte dropout masks are kept for every model as in that paper.  Elements are
//   bytes_per_element(dtype) wide.  With full checkpointing a block keeps only its input s*b*h.
//   The head keeps its two inputs and the fp32 logits for the cross entropy (4*s*b*V) and is not
//   recomputed; the embedding keeps its dropout mask (s*b*h bytes).  Memory-efficient attention
//   keeps no score-sized tensors (softmax output, its dropout mask and output: 5*a*s^2*b bytes).
//   A framework's score kernels (TrainingConfig::attention_scores) keep what its autograd saves:
//   Hugging Face OPT the clamp's input and the softmax output (4*a*s^2*b bytes at 16-bit), a
//   masked fill the softmax output (2*a*s^2*b).
// - Tied embeddings: the shared matrix is counted once, in the embedding's `params`; the head's
//   `params_used` includes it because the head's forward and backward need it.
// - Mixture of experts (ModelConfig::experts): a block holds E expert FFNs and the router's h x E
//   matrix; each expert's GEMMs run expert_rows() tokens (T k / E, times the capacity factor), so
//   the FFN's FLOPs are 2 E rows (FFN matrix entries) and the router's 2 T h E.  Every expert is
//   used by some token of a micro-batch, so `params_used` is every expert's.  Kept for backward,
//   besides the dense block's tensors with E rows in place of T in the FFN's f-wide ones: the
//   router's T x E scores, the dispatched expert inputs and the expert outputs (E rows x h each).
//   Each expert is expert_width() wide; shared experts are one FFN of their summed width on all T
//   tokens; the first dense_layers blocks are dense blocks of ffn_hidden (block_layer_info).
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/model_config.hpp"
#include "workloads/tensor_sharding.hpp"
#include "workloads/training_config.hpp"

namespace luwu::workloads {

enum class LayerKind { Embedding, Transformer, Head };
std::string to_string(LayerKind);

struct LayerInfo {
  std::string name;              // "embedding", "block_0" .. "block_{L-1}", "head"
  LayerKind kind = LayerKind::Transformer;
  std::uint64_t params = 0;      // owned parameters (weights + biases + norm gains/biases)
  std::uint64_t params_used = 0; // parameters its compute reads: params, plus the tied matrix for the head
  double forward_flops = 0;      // per micro-batch
  double backward_flops = 0;     // per micro-batch
  std::uint64_t activation_bytes = 0;  // kept for backward without checkpointing, per micro-batch
  std::uint64_t checkpoint_bytes = 0;  // kept with full checkpointing (== activation_bytes for embedding and head)
  // A dense block of a mixture of experts (ModelConfig::dense_layers): its numbers, kernels and
  // collectives are those of ModelConfig::with_dense_ffn.  Derived from the block's place, never
  // read from a file.
  bool dense_ffn = false;
  // Of `params`, the routed experts' (a mixture's blocks with experts; this GPU's share of them with
  // expert parallelism): what is reduced over the expert-data-parallel group.  Derived, as dense_ffn.
  std::uint64_t expert_params = 0;

  bool operator==(const LayerInfo&) const = default;
};

// Parameter counts of the pieces, for the whole model's sum and for tests.
std::uint64_t embedding_params(const ModelConfig& model);    // tokens (+ learned positions)
std::uint64_t transformer_block_params(const ModelConfig& model);  // a mixture's: a block with experts
std::uint64_t head_params(const ModelConfig& model);         // final norm (+ LM head when untied)
std::uint64_t lm_head_matrix_params(const ModelConfig& model);  // vocab x hidden
std::uint64_t norm_params(const ModelConfig& model);            // gain (+ bias for LayerNorm)
// Mixture of experts: the tokens each expert's GEMMs run per micro-batch, ceil(c T k / E) (c the
// capacity factor, T = micro_batch x seq_len, k experts per token); a dense model: T.
std::uint64_t expert_rows(const ModelConfig& model, const TrainingConfig& training);

// Sets what a block's place in the model decides and no file carries: LayerInfo::dense_ffn and
// LayerInfo::expert_params (this GPU's routed experts' parameters, 0 in a dense block).
void derive_block_fields(LayerInfo& layer, const ModelConfig& model, const TensorSharding& sharding, int block);

// Block `block` (0-based) of the model, named "block_<block>": a dense block for a mixture's first
// dense_layers (LayerInfo::dense_ffn), otherwise sharded_layer_info's block.
LayerInfo block_layer_info(const ModelConfig& model, const TrainingConfig& training, const TensorSharding& sharding,
                           int block);

// L + 2 layers in execution order; the training config gives b, s and the element type.
std::vector<LayerInfo> layer_infos(const ModelConfig& model, const TrainingConfig& training);

// One GPU's share of a layer under tensor parallelism (workloads/tensor_sharding.hpp says what is
// split and what replicated), named as layer_infos names it ("block" for a block: the caller adds
// its index).  Per GPU, with t = sharding.tensor and T = b s tokens:
// - params: split matrices and column-parallel biases / t, replicated norms, row-parallel biases
//   and position table whole; embedding and head ceil(V / t) x h.  `head_owns_tied_matrix`: the
//   head holds its own copy of a tied embedding matrix, as Megatron-LM's last pipeline stage does
//   when the embedding is on another stage (its gradient is then all-reduced with the first
//   stage's, a reduction the training system issues); otherwise a tied head owns only its norm.
// - FLOPs: the block's / t (every GEMM and attention head is split), the head's 2 T h ceil(V / t).
// - activations (Korthikanti et al. 2022, section 4.2): the tensors inside the split regions
//   (Q, K, V, scores, softmax and its dropout, attention-out input, the FFN's f-wide tensors) / t;
//   the norm inputs, QKV and FFN inputs and the two residual dropout masks whole, or / t with
//   sequence parallelism: s b h (10 + 24 / t + 5 a s / (h t)) bytes per GPT block at 16 bits,
//   s b h (34 + 5 a s / h) / t with sequence parallelism.  The checkpoint (a block's input) and
//   the embedding's dropout mask are whole, / t with sequence parallelism; the head's two inputs
//   likewise, its fp32 logits 4 T ceil(V / t).
// With TensorSharding{} every number equals layer_infos' entry.
LayerInfo sharded_layer_info(const ModelConfig& model, const TrainingConfig& training, const TensorSharding& sharding,
                             LayerKind kind, bool head_owns_tied_matrix = false);

}  // namespace luwu::workloads
