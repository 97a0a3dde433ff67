#include "workloads/model_config.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "workloads/model_catalog.hpp"

namespace luwu::workloads {

std::string to_string(FfnKind k) { return k == FfnKind::Gelu ? "gelu" : "swiglu"; }
std::string to_string(NormKind k) { return k == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }
std::string to_string(PositionEmbedding p) { return p == PositionEmbedding::Learned ? "learned" : "rotary"; }

namespace {

constexpr std::int64_t kMaxSize = std::numeric_limits<int>::max();

// Parameter, FLOP and byte counts are uint64 (layer_accounting.cpp): a model is accepted only if
// its parameters, at the 16 bytes of state each one carries in mixed-precision Adam, count in
// bytes below 2^62, i.e. at most 2^58 (2.9e17) parameters, 2900x a 100T-parameter model.
// Traces hold one entry per block and op, so blocks are capped too (the deepest published
// models have about a hundred).
constexpr long double kMaxParams = 288230376151711744.0L;  // 2^58
constexpr std::int64_t kMaxLayers = 1 << 20;
// Far past any published model (DeepSeek-V3: 256 routed experts per block).
constexpr std::int64_t kMaxExperts = 1 << 16;

// An upper bound of the parameter count (every bias and norm, SwiGLU's three FFN matrices),
// computed in floating point so that it cannot wrap.
long double parameter_upper_bound(const ModelConfig& m) {
  const long double h = m.hidden, kv = m.kv_width(), f = m.ffn_hidden, V = m.vocab, S = m.max_seq;
  const long double experts = m.moe() ? m.experts + m.shared_experts : 1, fe = std::max<long double>(f, m.expert_width());
  const long double block = 2 * h * h + 2 * h * kv + experts * (3 * h * fe + 2 * fe + h) + h * experts + (4 * h + 2 * kv) + 4 * h;
  return m.layers * block + 2 * V * h + S * h + 2 * h;
}

int positive_int(const JsonNode& node) { return static_cast<int>(node.as_int(1, kMaxSize)); }

// The published configuration this object repeats field for field, if any.
bool repeats_catalog_entry(const JsonNode& node, const std::string& name) {
  const ModelConfig* entry = find_catalog_model(name);
  return entry != nullptr && model_to_json(*entry) == node.raw();
}

}  // namespace

ModelConfig model_from_json(const JsonNode& node) {
  node.only_keys({"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn_kind", "vocab", "max_seq",
                  "tied_embeddings", "norm", "position_embedding", "biases", "experts", "experts_per_token",
                  "expert_ffn_hidden", "shared_experts", "dense_layers", "qkv_projections", "source"});
  ModelConfig m;
  m.name = node.has("name") ? node.at("name").as_string() : "custom";
  if (m.name.empty()) node.at("name").fail("the name must not be empty");
  m.layers = static_cast<int>(node.at("layers").as_int(1, kMaxLayers));
  m.hidden = positive_int(node.at("hidden"));
  m.heads = positive_int(node.at("heads"));
  m.kv_heads = node.has("kv_heads") ? positive_int(node.at("kv_heads")) : m.heads;
  m.ffn_kind = node.has("ffn_kind")
                   ? node.at("ffn_kind").as_choice(choices_by_name({FfnKind::Gelu, FfnKind::SwiGlu}), "FFN kind")
                   : FfnKind::Gelu;
  if (node.has("ffn_hidden")) {
    m.ffn_hidden = positive_int(node.at("ffn_hidden"));
  } else if (m.ffn_kind == FfnKind::Gelu) {
    if (m.hidden > kMaxSize / 4) node.at("hidden").fail("too large for the default ffn_hidden = 4 * hidden");
    m.ffn_hidden = 4 * m.hidden;
  } else {
    // SwiGLU widths are not a fixed multiple of hidden (LLaMA-2 7B: 11008 for 4096).
    node.fail("missing required field \"ffn_hidden\" (a \"swiglu\" FFN has no default width)");
  }
  m.vocab = positive_int(node.at("vocab"));
  m.max_seq = positive_int(node.at("max_seq"));
  m.tied_embeddings = node.get_bool("tied_embeddings", true);
  m.norm = node.has("norm") ? node.at("norm").as_choice(choices_by_name({NormKind::LayerNorm, NormKind::RmsNorm}), "norm")
                            : NormKind::LayerNorm;
  m.position_embedding =
      node.has("position_embedding")
          ? node.at("position_embedding")
                .as_choice(choices_by_name({PositionEmbedding::Learned, PositionEmbedding::Rotary}), "position embedding")
          : PositionEmbedding::Learned;
  m.biases = node.get_bool("biases", true);
  if (node.has("qkv_projections"))
    m.separate_qkv = node.at("qkv_projections").as_choice(Choices<bool>{{"fused", false}, {"separate", true}}, "QKV projections");
  m.source = node.get_string("source", "");
  if (node.has("experts") != node.has("experts_per_token"))
    node.fail(std::string("a mixture of experts needs both \"experts\" and \"experts_per_token\", found only \"") +
              (node.has("experts") ? "experts" : "experts_per_token") + "\"");
  if (node.has("experts")) {
    m.experts = static_cast<int>(node.at("experts").as_int(2, kMaxExperts));
    m.experts_per_token = static_cast<int>(node.at("experts_per_token").as_int(1, m.experts));
  }
  for (const char* key : {"expert_ffn_hidden", "shared_experts", "dense_layers"})
    if (node.has(key) && !m.moe())
      node.at(key).fail(std::string("\"") + key + "\" describes a mixture of experts: it needs \"experts\" and \"experts_per_token\"");
  if (node.has("expert_ffn_hidden")) m.expert_ffn_hidden = positive_int(node.at("expert_ffn_hidden"));
  if (node.has("shared_experts")) m.shared_experts = static_cast<int>(node.at("shared_experts").as_int(0, kMaxExperts));
  if (node.has("dense_layers"))
    m.dense_layers = static_cast<int>(node.at("dense_layers").as_int(0, std::max<std::int64_t>(0, m.layers - 1)));

  if (m.kv_heads > m.heads)
    node.at("kv_heads").fail("kv_heads (" + std::to_string(m.kv_heads) + ") exceeds heads (" + std::to_string(m.heads) + ")");
  if (m.heads % m.kv_heads != 0)
    node.at("kv_heads").fail("heads (" + std::to_string(m.heads) + ") must be divisible by kv_heads (" +
                             std::to_string(m.kv_heads) + ")");
  if (m.hidden % m.heads != 0 && !repeats_catalog_entry(node, m.name))
    node.at("hidden").fail("hidden (" + std::to_string(m.hidden) + ") must be divisible by heads (" +
                           std::to_string(m.heads) + ")");
  if (parameter_upper_bound(m) > kMaxParams)
    node.fail(fmt::format("the model is too large to count: about {:.3g} parameters, luwusim counts up to 2^58 "
                          "(2.9e17)", static_cast<double>(parameter_upper_bound(m))));
  return m;
}

Json model_to_json(const ModelConfig& m) {
  Json j = Json::object();
  j["name"] = m.name;
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["ffn_hidden"] = m.ffn_hidden;
  j["ffn_kind"] = to_string(m.ffn_kind);
  j["vocab"] = m.vocab;
  j["max_seq"] = m.max_seq;
  j["tied_embeddings"] = m.tied_embeddings;
  j["norm"] = to_string(m.norm);
  j["position_embedding"] = to_string(m.position_embedding);
  j["biases"] = m.biases;
  if (m.separate_qkv) j["qkv_projections"] = "separate";
  if (m.moe()) {
    j["experts"] = m.experts;
    j["experts_per_token"] = m.experts_per_token;
    if (m.expert_ffn_hidden > 0) j["expert_ffn_hidden"] = m.expert_ffn_hidden;
    if (m.shared_experts > 0) j["shared_experts"] = m.shared_experts;
    if (m.dense_layers > 0) j["dense_layers"] = m.dense_layers;
  }
  j["source"] = m.source;
  return j;
}

std::string describe_ffn(const ModelConfig& m) {
  if (!m.moe()) return fmt::format("{} {}", m.ffn_hidden, to_string(m.ffn_kind));
  std::string s = fmt::format("{} {} x {} experts, {} per token", m.expert_width(), to_string(m.ffn_kind), m.experts,
                              m.experts_per_token);
  if (m.shared_experts > 0) s += fmt::format(", {} shared", m.shared_experts);
  if (m.dense_layers > 0)
    s += fmt::format("; {} dense block{} of {}", m.dense_layers, m.dense_layers == 1 ? "" : "s", m.ffn_hidden);
  return s;
}

bool operator==(const ModelConfig& a, const ModelConfig& b) { return model_to_json(a) == model_to_json(b); }

}  // namespace luwu::workloads
