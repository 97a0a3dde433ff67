// Where the modules without parameters of their own begin (workloads/kernels.hpp,
// Kernel::parameterless_modules), against Hugging Face's decoder layers read by hand:
// OPTDecoderLayer holds self_attn_layer_norm, self_attn (OPTAttention: the projections),
// final_layer_norm, fc1, activation_fn, fc2; LlamaDecoderLayer holds input_layernorm, self_attn,
// post_attention_layernorm and mlp (LlamaMLP: gate/up, act_fn, down).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "workloads/kernels.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu::workloads;

namespace {

std::map<std::string, int> modules_by_kernel(const char* model, LayerKind layer, OpKind op) {
  TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 256;
  std::map<std::string, int> out;
  for (const auto& k : layer_kernels(*find_catalog_model(model), t, layer, op)) out[k.name] += k.parameterless_modules;
  return out;
}

int total(const std::map<std::string, int>& m) {
  int sum = 0;
  for (const auto& [name, n] : m) sum += n;
  return sum;
}

}  // namespace

TEST_CASE("an OPT block: the block, the attention module and the activation begin at their first kernel") {
  const auto f = modules_by_kernel("opt-1.3b", LayerKind::Transformer, OpKind::Forward);
  CHECK(f.at("attention-norm") == 1);  // the decoder layer, then its norm (which has parameters)
  CHECK(f.at("q") == 1);               // the attention module, then q_proj
  CHECK(f.at("activation") == 1);
  CHECK(total(f) == 3);
  // Recompute replays the forward, hooks included.
  CHECK(modules_by_kernel("opt-1.3b", LayerKind::Transformer, OpKind::Recompute) == f);
}

TEST_CASE("an OPT block's backward: each of those modules begins at the backward of its last kernel") {
  const auto b = modules_by_kernel("opt-1.3b", LayerKind::Transformer, OpKind::Backward);
  CHECK(b.at("residual backward") == 1);         // the layer's output gradient comes first
  CHECK(b.at("attention-out dgrad") == 1);       // the attention module's output is out_proj's
  CHECK(b.at("activation backward") == 1);
  CHECK(total(b) == 3);
}

TEST_CASE("a Llama block adds its MLP module: up to down in forward, down first in backward") {
  const auto f = modules_by_kernel("llama2-7b", LayerKind::Transformer, OpKind::Forward);
  CHECK(f.at("ffn-up") == 1);
  CHECK(total(f) == 4);
  const auto b = modules_by_kernel("llama2-7b", LayerKind::Transformer, OpKind::Backward);
  CHECK(b.at("ffn-down dgrad") == 1);
  CHECK(total(b) == 4);
}

TEST_CASE("the causal-LM, model and decoder modules: three begin at the embedding, end at the head") {
  CHECK(total(modules_by_kernel("opt-1.3b", LayerKind::Embedding, OpKind::Forward)) == 3);
  CHECK(total(modules_by_kernel("opt-1.3b", LayerKind::Embedding, OpKind::Backward)) == 0);
  CHECK(total(modules_by_kernel("opt-1.3b", LayerKind::Head, OpKind::Forward)) == 0);
  const auto b = modules_by_kernel("opt-1.3b", LayerKind::Head, OpKind::Backward);
  CHECK(b.at("cross-entropy backward") == 1);  // the loss is the causal-LM module's output
  CHECK(b.at("final-norm backward") == 2);     // the decoder's output is the final norm's
  CHECK(total(b) == 3);
}

TEST_CASE("OPT projects q, k and v as three modules: the fused QKV's FLOPs and parameters in three GEMMs") {
  TrainingConfig t;
  t.micro_batch = 2;
  t.seq_len = 128;
  ModelConfig opt = *find_catalog_model("opt-1.3b");
  REQUIRE(opt.separate_qkv);
  ModelConfig fused = opt;
  fused.separate_qkv = false;
  auto kernels = [&](const ModelConfig& m) {
    std::map<std::string, Kernel> out;
    for (const auto& k : layer_kernels(m, t, LayerKind::Transformer, OpKind::Forward)) out[k.name] = k;
    return out;
  };
  const auto three = kernels(opt), one = kernels(fused);
  CHECK(one.count("q") == 0);
  CHECK(three.count("qkv") == 0);
  const double h = 2048, T = 2 * 128;
  for (const char* name : {"q", "k", "v"}) {
    CAPTURE(name);
    CHECK(three.at(name).flops == doctest::Approx(2 * T * h * h));
    CHECK(three.at(name).params == static_cast<std::uint64_t>(h * h + h));  // matrix and bias
  }
  CHECK(three.at("q").flops + three.at("k").flops + three.at("v").flops == doctest::Approx(one.at("qkv").flops));
  CHECK(three.at("q").params + three.at("k").params + three.at("v").params == one.at("qkv").params);
}
