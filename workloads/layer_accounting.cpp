#include "workloads/layer_accounting.hpp"

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
u64 ffn_matrix_params(const ModelConfig& m) {
  const u64 h = m.hidden, f = m.ffn_hidden;
  return (m.ffn_kind == FfnKind::Gelu ? 2 : 3) * h * f;
}
u64 block_bias_params(const ModelConfig& m) {
  if (!m.biases) return 0;
  const u64 h = m.hidden, kv = m.kv_width(), f = m.ffn_hidden;
  const u64 attention = h + 2 * kv + h;  // Q, K, V, O
  const u64 ffn = m.ffn_kind == FfnKind::Gelu ? f + h : 2 * f + h;
  return attention + ffn;
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
  return attention_matrix_params(m) + ffn_matrix_params(m) + block_bias_params(m) + 2 * norm_params(m);
}

u64 lm_head_matrix_params(const ModelConfig& m) { return static_cast<u64>(m.vocab) * m.hidden; }

u64 head_params(const ModelConfig& m) {
  return norm_params(m) + (m.tied_embeddings ? 0 : lm_head_matrix_params(m));
}

std::vector<LayerInfo> layer_infos(const ModelConfig& m, const TrainingConfig& t) {
  const u64 b = t.micro_batch, s = t.seq_len, h = m.hidden, a = m.heads, kv = m.kv_width(), f = m.ffn_hidden,
            V = m.vocab;
  const u64 e = bytes_per_element(t.dtype);
  const u64 tokens = b * s;
  const u64 sbh = tokens * h;
  const u64 scores = t.memory_efficient_attention ? 0 : a * s * s * b;  // score elements kept, all heads

  std::vector<LayerInfo> layers;
  layers.reserve(m.layers + 2);

  LayerInfo embedding;
  embedding.name = "embedding";
  embedding.kind = LayerKind::Embedding;
  embedding.params = embedding.params_used = embedding_params(m);
  embedding.activation_bytes = embedding.checkpoint_bytes = sbh;  // 1-byte dropout mask
  layers.push_back(embedding);

  LayerInfo block;
  block.kind = LayerKind::Transformer;
  block.params = block.params_used = transformer_block_params(m);
  block.forward_flops = 2.0 * static_cast<double>(tokens) *
                            static_cast<double>(attention_matrix_params(m) + ffn_matrix_params(m)) +
                        4.0 * static_cast<double>(b) * static_cast<double>(s) * static_cast<double>(s) *
                            static_cast<double>(h);
  block.backward_flops = 2 * block.forward_flops;
  if (t.memory_efficient_attention)
    block.backward_flops += 2.0 * static_cast<double>(b) * static_cast<double>(s) * static_cast<double>(s) *
                            static_cast<double>(h);
  // e-byte tensors: QKV input, Q, K, V, out-projection input, both norm inputs, FFN input,
  // the FFN's f-wide tensors (GELU: its input and output; SwiGLU: gate, up and their product),
  // softmax output and its dropout output.  1-byte masks: attention dropout, two residual dropouts.
  const u64 ffn_wide_tensors = m.ffn_kind == FfnKind::Gelu ? 2 : 3;
  const u64 elements = sbh /*QKV in*/ + sbh /*Q*/ + 2 * tokens * kv /*K, V*/ + sbh /*out-proj in*/ +
                       2 * sbh /*norm inputs*/ + sbh /*FFN in*/ + ffn_wide_tensors * tokens * f + 2 * scores;
  const u64 mask_bytes = scores + 2 * sbh;
  block.activation_bytes = e * elements + mask_bytes;
  block.checkpoint_bytes = e * sbh;
  for (int i = 0; i < m.layers; ++i) {
    block.name = "block_" + std::to_string(i);
    layers.push_back(block);
  }

  LayerInfo head;
  head.name = "head";
  head.kind = LayerKind::Head;
  head.params = head_params(m);
  head.params_used = norm_params(m) + lm_head_matrix_params(m);
  head.forward_flops = 2.0 * static_cast<double>(tokens) * static_cast<double>(h) * static_cast<double>(V);
  head.backward_flops = 2 * head.forward_flops;
  // Final-norm input, LM-head input, and the logits in fp32 for the cross entropy.
  head.activation_bytes = head.checkpoint_bytes = e * 2 * sbh + 4 * tokens * V;
  layers.push_back(head);
  return layers;
}

}  // namespace luwu::workloads
