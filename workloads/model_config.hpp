#pragma once
// The shape of a transformer language model: what the per-layer accounting needs and nothing more.
#include <string>

#include "common/json_input.hpp"

namespace luwu::workloads {

// GELU: two matrices h x f and f x h.  SwiGLU (LLaMA): three, gate and up h x f, down f x h.
enum class FfnKind { Gelu, SwiGlu };
// LayerNorm has a gain and a bias per feature, RMSNorm (LLaMA) only a gain.
enum class NormKind { LayerNorm, RmsNorm };
// Learned position embeddings are a max_seq x hidden table (GPT, OPT, BERT); rotary ones (LLaMA)
// have no parameters.
enum class PositionEmbedding { Learned, Rotary };

struct ModelConfig {
  std::string name;
  int layers = 0;       // transformer blocks
  int hidden = 0;       // model width h
  int heads = 0;        // query heads a
  int kv_heads = 0;     // key/value heads (== heads for multi-head, fewer for grouped-query attention)
  int ffn_hidden = 0;   // FFN inner width f
  FfnKind ffn_kind = FfnKind::Gelu;
  int vocab = 0;
  int max_seq = 0;      // longest sequence the model was built for (learned position table rows)
  bool tied_embeddings = true;  // the LM head reuses the token embedding matrix
  NormKind norm = NormKind::LayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::Learned;
  bool biases = true;   // linear layers carry biases (GPT, OPT, BERT) or not (LLaMA)
  // Mixture of experts (Shazeer et al. 2017; GShard; Mixtral, Jiang et al. 2024, arXiv 2401.04088):
  // every block's FFN is `experts` FFNs of width ffn_hidden behind a router (an h x experts
  // matrix), and each token goes to `experts_per_token` of them (top-k).  0 experts: a dense FFN.
  int experts = 0;
  int experts_per_token = 0;
  std::string source;   // where the numbers come from (paper, table)
  // Fine-grained experts (DeepSeekMoE, Dai et al. 2024, arXiv 2401.06066, section 3): experts
  // narrower than the dense FFN, `shared_experts` of them that every token goes through (run as one
  // FFN of shared_experts x expert width, as DeepSeek's code does), and the first `dense_layers`
  // blocks with a dense FFN of ffn_hidden (its config's first_k_dense_replace).  Mixture of
  // experts only; 0 each: an expert is ffn_hidden wide, none shared, every block a mixture.
  int expert_ffn_hidden = 0;
  int shared_experts = 0;
  int dense_layers = 0;
  // The attention's input projections as three modules, q, k and v (Hugging Face's OPT and LLaMA:
  // q_proj, k_proj, v_proj), or one fused QKV (Megatron-LM, GPT-NeoX); JSON "qkv_projections":
  // "separate" or "fused" (the default).  The same FLOPs and parameters either way; a system that
  // gathers per module (ZeRO-3) gathers three.
  bool separate_qkv = false;

  bool moe() const { return experts > 0; }
  // Each routed (and shared) expert's inner width.
  int expert_width() const { return expert_ffn_hidden > 0 ? expert_ffn_hidden : ffn_hidden; }
  // Whether block `block` (0-based) has a dense FFN: every block of a dense model, the first
  // dense_layers of a mixture.
  bool dense_block(int block) const { return !moe() || block < dense_layers; }
  // The model a dense block of this one is a block of: the same but with a dense FFN of ffn_hidden.
  ModelConfig with_dense_ffn() const {
    ModelConfig m = *this;
    m.experts = m.experts_per_token = m.expert_ffn_hidden = m.shared_experts = m.dense_layers = 0;
    return m;
  }

  // Width of the K and V projections: hidden * kv_heads / heads.
  long long kv_width() const { return static_cast<long long>(hidden) * kv_heads / heads; }
};

std::string to_string(FfnKind);
// The FFN in a line: "10944 swiglu", and for a mixture "14336 swiglu x 8 experts, 2 per token" or,
// fine-grained, "experts 1408 swiglu x 64, 6 per token, 2 shared; 1 dense block of 10944".
std::string describe_ffn(const ModelConfig& model);
std::string to_string(NormKind);
std::string to_string(PositionEmbedding);

// An inline model: {"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn_kind",
// "vocab", "max_seq", "tied_embeddings", "norm", "position_embedding", "biases", "experts",
// "experts_per_token", "expert_ffn_hidden", "shared_experts", "dense_layers", "source"}.
// Mixture of experts: "experts" (at least 2) and "experts_per_token" (1 to experts) together;
// written back only for such models, so a dense model's JSON is as it was.  "expert_ffn_hidden",
// "shared_experts" and "dense_layers" (fewer than "layers") only with them, written back only
// where not 0.
// Required: layers, hidden, heads, vocab, max_seq.  Defaults describe a GPT-style model:
// kv_heads = heads, ffn_kind "gelu", ffn_hidden = 4 * hidden (required for "swiglu"),
// tied_embeddings true, norm "layernorm", position_embedding "learned", biases true,
// name "custom".  Unknown keys, non-positive sizes, hidden not divisible by heads and heads not
// divisible by kv_heads are InputErrors naming the JSON path.  One exception: an object that
// repeats a catalog entry field for field (as trace files do) is accepted as published, because
// GPT-3 1.3B (2048/24) and 13B (5140/40) have a hidden width the head count does not divide.
ModelConfig model_from_json(const luwu::JsonNode& node);

// Every field, so model_from_json(model_to_json(m)) == m.
luwu::Json model_to_json(const ModelConfig& model);

bool operator==(const ModelConfig& a, const ModelConfig& b);

}  // namespace luwu::workloads
