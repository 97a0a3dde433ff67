#include "workloads/model_catalog.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

namespace luwu::workloads {

namespace {

constexpr auto Gelu = FfnKind::Gelu;
constexpr auto SwiGlu = FfnKind::SwiGlu;
constexpr auto LayerNorm = NormKind::LayerNorm;
constexpr auto RmsNorm = NormKind::RmsNorm;
constexpr auto Learned = PositionEmbedding::Learned;
constexpr auto Rotary = PositionEmbedding::Rotary;

const char* const kGpt3 =
    "GPT-3 paper, Brown et al. 2020 (arXiv 2005.14165) table 2.1; vocabulary 50257, context 2048; "
    "FFN 4h, tied embeddings, learned positions as GPT-2";
const char* const kMegatron =
    "Megatron-LM, Narayanan et al. 2021 (arXiv 2104.04473) table 1; vocabulary 51200, s = 2048; FFN 4h, tied "
    "embeddings";
const char* const kOpt =
    "OPT paper, Zhang et al. 2022 (arXiv 2205.01068) table 1; vocabulary 50272, context 2048, FFN 4h, tied "
    "embeddings (the 2 offset rows of OPT's position table are not counted); OPT's ReLU FFN is counted as "
    "GELU (same parameters and FLOPs); q, k and v projected separately, as Hugging Face's OPTAttention does";
const char* const kLuwuCustom =
    "LuWu paper (arXiv 2409.00918, revision 'DisDP') experimental setup: OPT architecture with the "
    "paper's blocks, heads and hidden size; OPT's vocabulary 50272, context 2048 and FFN 4h; q, k and v "
    "projected separately, as Hugging Face's OPTAttention does";
const char* const kLlama2 =
    "LLaMA 2 paper, Touvron et al. 2023 (arXiv 2307.09288) table 1 and the released configs; vocabulary 32000, "
    "context 4096, SwiGLU, RMSNorm, rotary positions, no biases, untied LM head";
const char* const kMixtral =
    "Mixtral of Experts, Jiang et al. 2024 (arXiv 2401.04088) table 1 and the released config.json files: "
    "8 experts per block, 2 per token, SwiGLU experts, grouped-query attention (8 KV heads), RMSNorm, rotary "
    "positions, no biases, untied LM head; published as 46.7B total, 12.9B active (8x7B) and 141B, 39B (8x22B)";
const char* const kDeepSeekMoe =
    "DeepSeekMoE, Dai et al. 2024 (arXiv 2401.06066) and the released deepseek-moe-16b-base config.json: 28 blocks, "
    "hidden 2048, 16 heads, the first block dense (FFN 10944), the other 27 with 64 routed experts of width 1408, "
    "6 per token, and 2 shared experts; SwiGLU, RMSNorm, rotary positions, no biases, untied LM head, vocabulary "
    "102400, context 4096; published as 16.4B total, 2.8B activated";
const char* const kBert =
    "BERT paper, Devlin et al. 2019 (arXiv 1810.04805); 24 layers, 1024 hidden, 16 heads, FFN 4096, "
    "WordPiece vocabulary 30522, 512 positions; MLM decoder tied (token-type rows, pooler and the MLM "
    "transform are not counted)";

//                         name             L    h      a   kv   f      ffn     V      s     tied   norm       pos      bias
ModelConfig entry(const char* name, int layers, int hidden, int heads, int kv_heads, int ffn, FfnKind kind, int vocab,
                  int max_seq, bool tied, NormKind norm, PositionEmbedding pos, bool biases, const char* source) {
  return ModelConfig{name, layers, hidden, heads, kv_heads, ffn, kind, vocab, max_seq, tied, norm, pos, biases, 0, 0, source};
}

// Hugging Face's OPTAttention projects q, k and v as three modules (q_proj, k_proj, v_proj), as
// the LuWu paper's OPT-architecture models run under DeepSpeed.
ModelConfig separate_qkv(ModelConfig m) {
  m.separate_qkv = true;
  return m;
}

// A mixture of experts: `experts` FFNs of width ffn per block, `per_token` of them per token;
// fine-grained (DeepSeekMoE): experts of width `expert_ffn`, `shared` of them always active, the
// first `dense` blocks dense with the entry's ffn.
ModelConfig with_experts(ModelConfig m, int experts, int per_token, int expert_ffn = 0, int shared = 0, int dense = 0) {
  m.experts = experts;
  m.experts_per_token = per_token;
  m.expert_ffn_hidden = expert_ffn;
  m.shared_experts = shared;
  m.dense_layers = dense;
  return m;
}

const std::map<std::string, ModelConfig>& catalog() {
  static const std::map<std::string, ModelConfig> models = [] {
    std::vector<ModelConfig> list = {
        // GPT-3 1.3B and 13B as published: the head count does not divide the width (the paper's
        // d_head = 128 for both); projections are modelled as h x h, which gives the published sizes.
        entry("gpt3-125m", 12, 768, 12, 12, 3072, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("gpt3-350m", 24, 1024, 16, 16, 4096, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("gpt3-760m", 24, 1536, 16, 16, 6144, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("gpt3-1.3b", 24, 2048, 24, 24, 8192, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("gpt3-2.7b", 32, 2560, 32, 32, 10240, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("gpt3-6.7b", 32, 4096, 32, 32, 16384, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("gpt3-13b", 40, 5140, 40, 40, 20560, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("gpt3-175b", 96, 12288, 96, 96, 49152, Gelu, 50257, 2048, true, LayerNorm, Learned, true, kGpt3),
        entry("megatron-18.4b", 40, 6144, 48, 48, 24576, Gelu, 51200, 2048, true, LayerNorm, Learned, true, kMegatron),
        entry("megatron-39.1b", 48, 8192, 64, 64, 32768, Gelu, 51200, 2048, true, LayerNorm, Learned, true, kMegatron),
        entry("megatron-76.1b", 60, 10240, 80, 80, 40960, Gelu, 51200, 2048, true, LayerNorm, Learned, true, kMegatron),
        entry("megatron-145.6b", 80, 12288, 96, 96, 49152, Gelu, 51200, 2048, true, LayerNorm, Learned, true, kMegatron),
        separate_qkv(entry("opt-1.3b", 24, 2048, 32, 32, 8192, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kOpt)),
        separate_qkv(entry("opt-2.7b", 32, 2560, 32, 32, 10240, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kOpt)),
        separate_qkv(entry("opt-6.7b", 32, 4096, 32, 32, 16384, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kOpt)),
        separate_qkv(entry("opt-13b", 40, 5120, 40, 40, 20480, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kOpt)),
        separate_qkv(entry("opt-30b", 48, 7168, 56, 56, 28672, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kOpt)),
        separate_qkv(entry("opt-66b", 64, 9216, 72, 72, 36864, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kOpt)),
        // The LuWu paper's own OPT-architecture shapes (random weights).
        separate_qkv(entry("custom-175b", 96, 12288, 96, 96, 49152, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kLuwuCustom)),
        separate_qkv(entry("custom-276b", 112, 14336, 112, 112, 57344, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kLuwuCustom)),
        separate_qkv(entry("custom-505b", 124, 18432, 144, 144, 73728, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kLuwuCustom)),
        separate_qkv(entry("custom-1.0t", 172, 22016, 172, 172, 88064, Gelu, 50272, 2048, true, LayerNorm, Learned, true, kLuwuCustom)),
        entry("llama2-7b", 32, 4096, 32, 32, 11008, SwiGlu, 32000, 4096, false, RmsNorm, Rotary, false, kLlama2),
        entry("llama2-13b", 40, 5120, 40, 40, 13824, SwiGlu, 32000, 4096, false, RmsNorm, Rotary, false, kLlama2),
        // Grouped-query attention: 8 key/value heads.
        entry("llama2-70b", 80, 8192, 64, 8, 28672, SwiGlu, 32000, 4096, false, RmsNorm, Rotary, false, kLlama2),
        entry("bert-large", 24, 1024, 16, 16, 4096, Gelu, 30522, 512, true, LayerNorm, Learned, true, kBert),
        // Mixtures of experts.
        with_experts(entry("mixtral-8x7b", 32, 4096, 32, 8, 14336, SwiGlu, 32000, 32768, false, RmsNorm, Rotary, false,
                           kMixtral), 8, 2),
        with_experts(entry("mixtral-8x22b", 56, 6144, 48, 8, 16384, SwiGlu, 32768, 65536, false, RmsNorm, Rotary, false,
                           kMixtral), 8, 2),
        with_experts(entry("deepseek-moe-16b", 28, 2048, 16, 16, 10944, SwiGlu, 102400, 4096, false, RmsNorm, Rotary,
                           false, kDeepSeekMoe), 64, 6, 1408, 2, 1),
    };
    std::map<std::string, ModelConfig> byName;
    for (auto& m : list) byName.emplace(m.name, m);
    return byName;
  }();
  return models;
}

}  // namespace

const ModelConfig* find_catalog_model(const std::string& name) {
  auto it = catalog().find(name);
  return it == catalog().end() ? nullptr : &it->second;
}

std::vector<std::string> catalog_model_names() {
  std::vector<std::string> names;
  for (const auto& [name, model] : catalog()) names.push_back(name);
  return names;  // std::map keeps them sorted
}

ModelConfig resolve_model(const std::string& name_or_file) {
  if (const ModelConfig* m = find_catalog_model(name_or_file)) return *m;
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_file, ec)) {
    Json doc = load_json_file(name_or_file);
    return model_from_json(JsonNode(doc, name_or_file));
  }
  throw InputError(name_or_file, "",
                   "neither a catalog model nor a model JSON file" + did_you_mean(name_or_file, catalog_model_names()) +
                       "; `luwusim trace models` lists the catalog");
}

}  // namespace luwu::workloads
