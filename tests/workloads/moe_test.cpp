// Mixture-of-experts blocks: parameter counts against Mistral's published totals, FLOPs and
// kernels against the closed forms of top-k routing, and the settings' doors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "common/input_error.hpp"
#include "workloads/layer_accounting.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"
#include "workloads/training_json.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

std::uint64_t total_params(const ModelConfig& m) {
  return embedding_params(m) + static_cast<std::uint64_t>(m.layers) * transformer_block_params(m) + head_params(m);
}

TrainingConfig tokens(int micro_batch, int seq_len) {
  TrainingConfig t;
  t.micro_batch = micro_batch;
  t.seq_len = seq_len;
  t.dtype = DType::Bf16;
  return t;
}

// A block's forward op of a trace (op 1: block_0's forward).
const TraceOp& block_forward(const Trace& t) { return t.ops.at(1); }

// The error's JSON path from parsing an inline model, or "" when it parses.
std::string model_error_path(const std::string& text) {
  const Json doc = Json::parse(text);
  try {
    model_from_json(JsonNode(doc, "moe.json"));
  } catch (const InputError& e) {
    return e.json_path();
  }
  return "";
}

}  // namespace

TEST_CASE("Mixtral 8x7B and 8x22B count Mistral's published 46.7B and 141B parameters") {
  // By hand, 8x7B: attention 2h^2 + 2h x 1024 (8 of 32 KV heads), 8 SwiGLU experts of 3 h f, the
  // router h x 8, two RMSNorms; untied embedding and LM head V h each, the final RMSNorm.
  const double h = 4096, f = 14336, V = 32000;
  const double block = 2 * h * h + 2 * h * 1024 + 8 * 3 * h * f + 8 * h + 2 * h;
  const auto& mixtral = *find_catalog_model("mixtral-8x7b");
  CHECK(static_cast<double>(total_params(mixtral)) == 32 * block + 2 * V * h + h);
  CHECK(static_cast<double>(total_params(mixtral)) == doctest::Approx(46.7e9).epsilon(0.001));
  CHECK(static_cast<double>(total_params(*find_catalog_model("mixtral-8x22b"))) == doctest::Approx(141e9).epsilon(0.003));
}

TEST_CASE("top-2 of 8 experts: a token's FLOPs are those of Mistral's 12.9B active parameters") {
  // T = 4,096 tokens, 2 experts each: every expert runs T x 2 / 8 = 1,024 rows, so the FFN runs
  // 2T rows, and a block's forward is 2 T (attention + router + 2 experts) + 4 s^2 h.
  const auto& m = *find_catalog_model("mixtral-8x7b");
  const TrainingConfig t = tokens(1, 4096);
  CHECK(expert_rows(m, t) == 1024);
  const double h = 4096, f = 14336, T = 4096, s = 4096;
  const double active_block = 2 * h * h + 2 * h * 1024 + 8 * h + 2 * 3 * h * f;
  const Trace trace = generate_trace(m, t);
  CHECK(block_forward(trace).flops == doctest::Approx(2 * T * active_block + 4 * s * s * h).epsilon(1e-12));
  // Active parameters per token (norms and both vocabulary matrices included): 12.9B published.
  const double active = 32 * (active_block + 2 * h) + 2 * 32000 * h + h;
  CHECK(active == doctest::Approx(12.9e9).epsilon(0.003));
  // The block owns and uses every expert: a micro-batch's tokens reach them all.
  CHECK(trace.layers.at(1).params == transformer_block_params(m));
  CHECK(trace.layers.at(1).params_used == transformer_block_params(m));
}

TEST_CASE("a mixture-of-experts block's kernels: router, dispatch, grouped expert GEMMs, combine") {
  const auto& m = *find_catalog_model("mixtral-8x7b");
  const Trace trace = generate_trace(m, tokens(2, 1024));  // T = 2,048; 512 rows per expert
  const auto& kernels = trace.kernels_of(block_forward(trace));
  std::vector<std::string> names;
  for (const auto& k : kernels) names.push_back(k.name);
  CHECK(names == std::vector<std::string>{"attention-norm", "qkv", "attention-scores", "attention-softmax",
                                          "attention-context", "attention-out", "ffn-norm", "router", "router-topk",
                                          "dispatch", "experts-up", "activation", "experts-down", "combine",
                                          "residual"});
  const double h = 4096, f = 14336;
  const Kernel* up = nullptr;
  const Kernel* down = nullptr;
  for (const auto& k : kernels) {
    if (k.name == "experts-up") up = &k;
    if (k.name == "experts-down") down = &k;
  }
  REQUIRE(up != nullptr);
  REQUIRE(down != nullptr);
  CHECK(up->gemm == GemmShape{512, static_cast<std::int64_t>(2 * f), static_cast<std::int64_t>(h), 8});
  CHECK(down->gemm == GemmShape{512, static_cast<std::int64_t>(h), static_cast<std::int64_t>(f), 8});
  CHECK(up->params == static_cast<std::uint64_t>(8 * h * 2 * f));  // every expert's gate and up
  CHECK(kernels.at(7).params == static_cast<std::uint64_t>(h * 8));  // the router
  // The kernels' FLOPs are the op's, forward and backward, and their parameters its bytes.
  for (const auto& op : trace.ops) {
    double flops = 0;
    std::uint64_t params = 0;
    for (const auto& k : trace.kernels_of(op)) {
      flops += k.flops;
      params += k.params;
    }
    CHECK(flops == doctest::Approx(op.flops).epsilon(1e-12));
    CHECK(params * 2 == op.param_bytes);
  }
}

TEST_CASE("a capacity factor pads every expert to c times its share of the tokens") {
  const auto& m = *find_catalog_model("mixtral-8x7b");
  TrainingConfig t = tokens(1, 1000);  // T k / E = 250
  CHECK(expert_rows(m, t) == 250);
  t.expert_capacity_factor = 1.25;
  CHECK(expert_rows(m, t) == 313);  // ceil(312.5)
  const double h = 4096, f = 14336;
  const double base = generate_trace(m, tokens(1, 1000)).ops.at(1).flops;
  const double padded = generate_trace(m, t).ops.at(1).flops;
  CHECK(padded - base == doctest::Approx(2 * 8 * (313 - 250) * 3 * h * f).epsilon(1e-12));
  // The padded rows run but no token needs them: the model's FLOPs (MFU's numerator) leave them out.
  const Trace balanced = generate_trace(m, tokens(1, 1000)), padded_trace = generate_trace(m, t);
  CHECK(padded_trace.flops_per_iteration() > balanced.flops_per_iteration());
  CHECK(padded_trace.model_flops() == doctest::Approx(balanced.model_flops()).epsilon(1e-12));
  CHECK(balanced.model_flops() ==
        doctest::Approx(balanced.flops_of(OpKind::Forward) + balanced.flops_of(OpKind::Backward)).epsilon(1e-15));
  // Written to JSON only when set, and read back; a dense model refuses it.
  CHECK(training_to_json(tokens(1, 1000)).count("expert_capacity_factor") == 0);
  const Json j = training_to_json(t);
  CHECK(training_from_json(JsonNode(j, "t.json"), m).expert_capacity_factor == 1.25);
  try {
    training_from_json(JsonNode(j, "t.json"), *find_catalog_model("llama2-7b"));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "$.expert_capacity_factor");
  }
  Json low = j;
  low["expert_capacity_factor"] = 0.5;  // below the balanced share: tokens would be dropped unmodelled
  CHECK_THROWS_AS(training_from_json(JsonNode(low, "t.json"), m), InputError);
}

TEST_CASE("inline mixtures of experts: both fields, in range, and a dense model's JSON as before") {
  const std::string base = R"("layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32)";
  CHECK(model_error_path("{" + base + R"(, "experts": 4, "experts_per_token": 2})") == "");
  CHECK(model_error_path("{" + base + R"(, "experts": 4})") == "$");
  CHECK(model_error_path("{" + base + R"(, "experts": 1, "experts_per_token": 1})") == "$.experts");
  CHECK(model_error_path("{" + base + R"(, "experts": 4, "experts_per_token": 5})") == "$.experts_per_token");
  const auto& mixtral = *find_catalog_model("mixtral-8x7b");
  const Json j = model_to_json(mixtral);
  CHECK(j.at("experts") == 8);
  CHECK(model_from_json(JsonNode(j, "m.json")) == mixtral);
  CHECK(model_to_json(*find_catalog_model("llama2-7b")).count("experts") == 0);
}

TEST_CASE("DeepSeekMoE 16B: fine-grained and shared experts, a dense first block, DeepSeek's 16.4B and 2.8B") {
  // By hand from the released config: attention 4 h^2 (16 of 16 KV heads, no biases); block 0 a
  // SwiGLU FFN of 10944; blocks 1..27 64 routed experts of 1408, 2 shared (one FFN of 2816), the
  // router h x 64; two RMSNorms per block; untied embedding and LM head V h each; the final norm.
  const double h = 2048, V = 102400, T = 4096, s = 4096;
  const double attention = 4 * h * h, norms = 2 * h;
  const double dense_block = attention + 3 * h * 10944 + norms;
  const double moe_block = attention + 64 * 3 * h * 1408 + 3 * h * 2816 + 64 * h + norms;
  const auto& m = *find_catalog_model("deepseek-moe-16b");
  const Trace trace = generate_trace(m, tokens(1, 4096));
  CHECK(static_cast<double>(trace.total_params()) == dense_block + 27 * moe_block + 2 * V * h + h);
  CHECK(static_cast<double>(trace.total_params()) == doctest::Approx(16.4e9).epsilon(0.002));
  CHECK(trace.layers.at(1).dense_ffn);
  CHECK_FALSE(trace.layers.at(2).dense_ffn);
  CHECK(static_cast<double>(trace.layers.at(1).params) == dense_block);
  CHECK(static_cast<double>(trace.layers.at(2).params) == moe_block);

  // Top-6 of 64: each expert runs T x 6 / 64 = 384 rows; a token passes through 6 routed experts,
  // the shared FFN and the router.
  CHECK(expert_rows(m, tokens(1, 4096)) == 384);
  const double active_moe = attention + 6 * 3 * h * 1408 + 3 * h * 2816 + 64 * h;
  CHECK(trace.ops.at(1).flops == doctest::Approx(2 * T * (attention + 3 * h * 10944) + 4 * s * s * h).epsilon(1e-12));
  CHECK(trace.ops.at(2).flops == doctest::Approx(2 * T * active_moe + 4 * s * s * h).epsilon(1e-12));
  // Activated parameters per token (norms and both vocabulary matrices included): 2.8B published.
  const double active = dense_block + 27 * (active_moe + norms) + 2 * V * h + h;
  CHECK(active == doctest::Approx(2.8e9).epsilon(0.02));

  // Kernels: block 0 the dense FFN's, the others the experts' and then the shared FFN's.
  std::vector<std::string> dense_names, moe_names;
  for (const auto& k : trace.kernels_of(trace.ops.at(1))) dense_names.push_back(k.name);
  for (const auto& k : trace.kernels_of(trace.ops.at(2))) moe_names.push_back(k.name);
  CHECK(std::find(dense_names.begin(), dense_names.end(), "ffn-up") != dense_names.end());
  CHECK(std::find(dense_names.begin(), dense_names.end(), "router") == dense_names.end());
  const std::vector<std::string> tail(moe_names.end() - 5, moe_names.end());
  CHECK(tail == std::vector<std::string>{"shared-experts-up", "shared-activation", "shared-experts-down", "shared-add",
                                         "residual"});
  for (const auto& k : trace.kernels_of(trace.ops.at(2)))
    if (k.name == "experts-up") CHECK(k.gemm == GemmShape{384, 2 * 1408, 2048, 64});
    else if (k.name == "shared-experts-up") CHECK(k.gemm == GemmShape{4096, 2 * 2816, 2048, 1});

  // Through JSON and back, the dense block found again from its place.
  const Json j = trace_to_json(trace);
  CHECK(j.at("model").at("dense_layers") == 1);
  CHECK(trace_from_json(JsonNode(j, "ds.json")).layers == trace.layers);
}

TEST_CASE("fine-grained expert fields: only on a mixture, in range, written back only where set") {
  const std::string base = R"("layers": 3, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32)";
  const std::string moe = base + R"(, "experts": 8, "experts_per_token": 2)";
  CHECK(model_error_path("{" + moe + R"(, "expert_ffn_hidden": 32, "shared_experts": 1, "dense_layers": 2})") == "");
  CHECK(model_error_path("{" + base + R"(, "shared_experts": 1})") == "$.shared_experts");
  CHECK(model_error_path("{" + base + R"(, "dense_layers": 1})") == "$.dense_layers");
  CHECK(model_error_path("{" + moe + R"(, "dense_layers": 3})") == "$.dense_layers");  // no block with experts left
  CHECK(model_error_path("{" + moe + R"(, "expert_ffn_hidden": 0})") == "$.expert_ffn_hidden");
  CHECK(model_to_json(*find_catalog_model("mixtral-8x7b")).count("shared_experts") == 0);
  const auto& ds = *find_catalog_model("deepseek-moe-16b");
  CHECK(model_from_json(JsonNode(model_to_json(ds), "m.json")) == ds);
}
