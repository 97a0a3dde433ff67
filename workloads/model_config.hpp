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

  bool moe() const { return experts > 0; }

  // Width of the K and V projections: hidden * kv_heads / heads.
  long long kv_width() const { return static_cast<long long>(hidden) * kv_heads / heads; }
};

std::string to_string(FfnKind);
std::string to_string(NormKind);
std::string to_string(PositionEmbedding);

// An inline model: {"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn_kind",
// "vocab", "max_seq", "tied_embeddings", "norm", "position_embedding", "biases", "experts",
// "experts_per_token", "source"}.
// Mixture of experts: "experts" (at least 2) and "experts_per_token" (1 to experts) together;
// written back only for such models, so a dense model's JSON is as it was.
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
