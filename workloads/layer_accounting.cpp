#include "workloads/layer_accounting.hpp"

#include <cmath>

namespace luwu::workloads {

std::string to_string(LayerKind k) {
  switch (k) {
    case LayerKind::Embedding: return "embedding";
    case LayerKind::Transformer: return "transformer";
    case LayerKind::Head: return "head";
  }
  return "?";
}

namespace {

using u64 = std::uint64_t;

// Entries of the block's weight matrices (no biases): Q and O are h x h, K and V h x kv_width.
u64 attention_matrix_params(const ModelConfig& m) {
  const u64 h = m.hidden, kv = m.kv_width();
  return 2 * h * h + 2 * h * kv;
}
// One FFN of inner width f: GELU's two matrices, SwiGLU's three.
u64 ffn_matrix_params(const ModelConfig& m, u64 f) { return (m.ffn_kind == FfnKind::Gelu ? 2 : 3) * static_cast<u64>(m.hidden) * f; }
// Its up-projection's output width (SwiGLU: gate and up side by side).
u64 ffn_up_width(const ModelConfig& m, u64 f) { return m.ffn_kind == FfnKind::Gelu ? f : 2 * f; }
// The FFNs of a block: one, or E experts, each expert_width() wide.
u64 ffn_count(const ModelConfig& m) { return m.moe() ? static_cast<u64>(m.experts) : 1; }
u64 ffn_width(const ModelConfig& m) { return static_cast<u64>(m.moe() ? m.expert_width() : m.ffn_hidden); }
// The shared experts of a mixture, one FFN of their summed width (0: none).
u64 shared_ffn_width(const ModelConfig& m) {
  return m.moe() ? static_cast<u64>(m.shared_experts) * static_cast<u64>(m.expert_width()) : 0;
}
// One GPU's routed FFNs with their biases: a dense model's FFN, or a mixture's experts (experts /
// expert of them with expert parallelism), each split over the tensor group.
u64 routed_ffn_params(const ModelConfig& m, const TensorSharding& tp) {
  const u64 fe = ffn_width(m), ffns = m.moe() ? ffn_count(m) / static_cast<u64>(tp.expert) : 1;
  return ffns * (tp.split(ffn_matrix_params(m, fe)) + (m.biases ? tp.split(ffn_up_width(m, fe)) + m.hidden : 0));
}
// The router of a mixture of experts: an h x E matrix, no bias.
u64 router_params(const ModelConfig& m) { return m.moe() ? static_cast<u64>(m.hidden) * m.experts : 0; }
u64 block_bias_params(const ModelConfig& m) {
  if (!m.biases) return 0;
  const u64 h = m.hidden, kv = m.kv_width(), fs = shared_ffn_width(m);
  const u64 attention = h + 2 * kv + h;  // Q, K, V, O
  return attention + ffn_count(m) * (ffn_up_width(m, ffn_width(m)) + h) + (fs > 0 ? ffn_up_width(m, fs) + h : 0);
}

}  // namespace

u64 norm_params(const ModelConfig& m) {
  return (m.norm == NormKind::LayerNorm ? 2 : 1) * static_cast<u64>(m.hidden);
}

u64 embedding_params(const ModelConfig& m) {
  const u64 h = m.hidden;
  u64 positions = m.position_embedding == PositionEmbedding::Learned ? static_cast<u64>(m.max_seq) * h : 0;
  return static_cast<u64>(m.vocab) * h + positions;
}

u64 transformer_block_params(const ModelConfig& m) {
  return attention_matrix_params(m) + ffn_count(m) * ffn_matrix_params(m, ffn_width(m)) +
         ffn_matrix_params(m, shared_ffn_width(m)) + router_params(m) + block_bias_params(m) + 2 * norm_params(m);
}

u64 expert_rows(const ModelConfig& m, const TrainingConfig& t) {
  const u64 tokens = static_cast<u64>(t.micro_batch) * static_cast<u64>(t.seq_len);
  if (!m.moe()) return tokens;
  const double share = t.expert_capacity_factor * static_cast<double>(tokens) * m.experts_per_token / m.experts;
  return static_cast<u64>(std::ceil(share - 1e-9 * share));  // an exact share stays itself
}

u64 lm_head_matrix_params(const ModelConfig& m) { return static_cast<u64>(m.vocab) * m.hidden; }

u64 head_params(const ModelConfig& m) {
  return norm_params(m) + (m.tied_embeddings ? 0 : lm_head_matrix_params(m));
}

LayerInfo sharded_layer_info(const ModelConfig& m, const TrainingConfig& t, const TensorSharding& tp, LayerKind kind,
                             bool head_owns_tied_matrix) {
  const u64 b = t.micro_batch, s = t.seq_len, h = m.hidden, a = m.heads, kv = m.kv_width();
  const u64 V = tp.vocab_rows(static_cast<u64>(m.vocab));  // this GPU's vocabulary rows
  const u64 e = bytes_per_element(t.dtype);
  const u64 tokens = b * s;
  const u64 sbh = tokens * h;
  const u64 scores = t.memory_efficient_attention ? 0 : a * s * s * b;  // score elements kept, all heads
  const u64 positions = m.position_embedding == PositionEmbedding::Learned ? static_cast<u64>(m.max_seq) * h : 0;

  LayerInfo layer;
  layer.kind = kind;
  layer.name = kind == LayerKind::Transformer ? "block" : to_string(kind);
  switch (kind) {
    case LayerKind::Embedding:
      layer.params = layer.params_used = V * h + positions;
      layer.activation_bytes = layer.checkpoint_bytes = tp.sequence_split(sbh);  // 1-byte dropout mask
      return layer;
    case LayerKind::Transformer: {
      // Column-parallel biases (QKV, FFN up) split, row-parallel ones (attention-out, FFN down) whole.
      // Experts (and the shared experts' FFN) are split as the dense FFN is; the router is whole on
      // every tensor rank.
      const u64 fe = ffn_width(m), fs = shared_ffn_width(m);
      // rows: the FFN's GEMM rows, all experts; with expert parallelism this GPU holds ffns of them,
      // each running the rows of every GPU of its group, the same rows in all.
      const u64 rows = ffn_count(m) * expert_rows(m, t);
      const u64 other_biases = m.biases ? tp.split(h + 2 * kv) + h + (fs > 0 ? tp.split(ffn_up_width(m, fs)) + h : 0) : 0;
      layer.params = layer.params_used = tp.split(attention_matrix_params(m)) + routed_ffn_params(m, tp) +
                                         tp.split(ffn_matrix_params(m, fs)) + router_params(m) + other_biases +
                                         2 * norm_params(m);
      const u64 local_h = tp.split(h);
      layer.forward_flops = 2.0 * static_cast<double>(tokens) *
                                static_cast<double>(tp.split(attention_matrix_params(m)) + router_params(m) +
                                                    tp.split(ffn_matrix_params(m, fs))) +
                            2.0 * static_cast<double>(rows) * static_cast<double>(tp.split(ffn_matrix_params(m, fe))) +
                            4.0 * static_cast<double>(b) * static_cast<double>(s) * static_cast<double>(s) *
                                static_cast<double>(local_h);
      layer.backward_flops = 2 * layer.forward_flops;
      if (t.memory_efficient_attention)
        layer.backward_flops += 2.0 * static_cast<double>(b) * static_cast<double>(s) * static_cast<double>(s) *
                                static_cast<double>(local_h);
      // e-byte tensors: QKV input, Q, K, V, out-projection input, both norm inputs, FFN input,
      // the FFN's f-wide tensors (GELU: its input and output; SwiGLU: gate, up and their product),
      // the score-sized tensors autograd keeps.  1-byte masks: two residual dropouts and, with
      // generic passes, the attention dropout's.  Inside the split regions / t; the rest whole, or
      // sequence-split.  Score-sized tensors kept (training_config.hpp AttentionScores):
      // - passes: the softmax output and its dropout output, and the dropout mask (Korthikanti's);
      // - hugging-face-opt: the clamp's input (torch.max saves it for its backward) and the softmax
      //   output (saved by the softmax and by the context GEMM); no dropout at OPT's p = 0;
      // - masked-fill: the softmax output (the fill keeps only its [s, s] mask).
      const u64 ffn_wide_tensors = m.ffn_kind == FfnKind::Gelu ? 2 : 3;
      const u64 score_tensors = t.attention_scores == AttentionScores::MaskedFill ? 1 : 2;
      const u64 score_masks = t.attention_scores == AttentionScores::Passes ? scores : 0;
      const u64 split_elements =
          tp.split(sbh /*Q*/ + 2 * tokens * kv /*K, V*/ + sbh /*out-proj in*/ +
                   ffn_wide_tensors * (rows * fe + tokens * fs) + score_tensors * scores);
      // A mixture of experts also keeps the router's scores, the dispatched inputs and the expert outputs.
      const u64 moe_elements = m.moe() ? tokens * static_cast<u64>(m.experts) + 2 * rows * h : 0;
      const u64 whole_elements = tp.sequence_split(sbh /*QKV in*/ + 2 * sbh /*norm inputs*/ + sbh /*FFN in*/) + moe_elements;
      const u64 mask_bytes = tp.split(score_masks) + tp.sequence_split(2 * sbh);
      layer.activation_bytes = e * (whole_elements + split_elements) + mask_bytes;
      layer.checkpoint_bytes = e * tp.sequence_split(sbh);
      return layer;
    }
    case LayerKind::Head:
      layer.params = norm_params(m) + (!m.tied_embeddings || head_owns_tied_matrix ? V * h : 0);
      layer.params_used = norm_params(m) + V * h;
      layer.forward_flops = 2.0 * static_cast<double>(tokens) * static_cast<double>(h) * static_cast<double>(V);
      layer.backward_flops = 2 * layer.forward_flops;
      // Final-norm input, LM-head input, and the logits in fp32 for the cross entropy.
      layer.activation_bytes = layer.checkpoint_bytes = e * tp.sequence_split(2 * sbh) + 4 * tokens * V;
      return layer;
  }
  return layer;
}

void derive_block_fields(LayerInfo& layer, const ModelConfig& m, const TensorSharding& tp, int block) {
  layer.dense_ffn = m.moe() && m.dense_block(block);
  layer.expert_params = m.moe() && !layer.dense_ffn ? routed_ffn_params(m, tp) : 0;
}

LayerInfo block_layer_info(const ModelConfig& m, const TrainingConfig& t, const TensorSharding& tp, int block) {
  const bool dense = m.moe() && m.dense_block(block);
  LayerInfo layer = sharded_layer_info(dense ? m.with_dense_ffn() : m, t, tp, LayerKind::Transformer);
  layer.name = "block_" + std::to_string(block);
  derive_block_fields(layer, m, tp, block);
  return layer;
}

std::vector<LayerInfo> layer_infos(const ModelConfig& m, const TrainingConfig& t) {
  std::vector<LayerInfo> layers;
  layers.reserve(static_cast<std::size_t>(m.layers) + 2);
  layers.push_back(sharded_layer_info(m, t, {}, LayerKind::Embedding));
  for (int i = 0; i < m.layers; ++i) layers.push_back(block_layer_info(m, t, {}, i));
  layers.push_back(sharded_layer_info(m, t, {}, LayerKind::Head));
  return layers;
}

}  // namespace luwu::workloads
