#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/input_error.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

TrainingConfig training(int b, int s, int g, bool recompute, DType dtype = DType::Fp16) {
  TrainingConfig t;
  t.micro_batch = b;
  t.seq_len = s;
  t.grad_accum = g;
  t.recompute = recompute;
  t.dtype = dtype;
  return t;
}

const ModelConfig& gpt3_175b() { return *find_catalog_model("gpt3-175b"); }

// Megatron-LM's iteration FLOPs (Narayanan et al. 2021, arXiv 2104.04473, appendix), B sequences
// of length s: forward per layer 24 B s h^2 + 4 B s^2 h, logits 2 B s h V; training is 3x the
// forward, and full recomputation adds one more forward of the transformer layers:
//   without: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)),  with: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double megatron_flops(double B, double s, double l, double h, double V, bool recompute) {
  return recompute ? 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
                   : 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
}

}  // namespace

TEST_CASE("GPT-3 175B iteration FLOPs match Megatron's closed form within 1%") {
  for (bool recompute : {false, true}) {
    CAPTURE(recompute);
    Trace t = generate_trace(gpt3_175b(), training(16, 2048, 2, recompute));
    const double B = 16 * 2;
    CHECK(t.flops_per_iteration() ==
          doctest::Approx(megatron_flops(B, 2048, 96, 12288, 50257, recompute)).epsilon(0.01));
    CHECK(t.tokens_per_iteration() == B * 2048);
  }
}

TEST_CASE("op order is forward 0..L+1 then recompute and backward L+1..0 per micro-step") {
  const ModelConfig& m = *find_catalog_model("gpt3-125m");
  for (bool recompute : {false, true}) {
    Trace t = generate_trace(m, training(2, 128, 3, recompute));
    const int n = m.layers + 2;
    REQUIRE(t.layers.size() == static_cast<std::size_t>(n));
    CHECK(t.layers.front().kind == LayerKind::Embedding);
    CHECK(t.layers.back().kind == LayerKind::Head);
    struct Expected {
      OpKind kind;
      int layer, micro_step;
    };
    std::vector<Expected> expected_order;  // built independently of the generator's loops
    for (int step = 0; step < 3; ++step) {
      for (int i = 0; i < n; ++i) expected_order.push_back({OpKind::Forward, i, step});
      for (int i = n - 1; i >= 0; --i) {
        if (recompute && i != 0 && i != n - 1) expected_order.push_back({OpKind::Recompute, i, step});
        expected_order.push_back({OpKind::Backward, i, step});
      }
    }
    REQUIRE(t.ops.size() == expected_order.size());
    for (std::size_t k = 0; k < t.ops.size(); ++k) {
      CAPTURE(k);
      CHECK(t.ops[k].kind == expected_order[k].kind);
      CHECK(t.ops[k].layer == expected_order[k].layer);
      CHECK(t.ops[k].micro_step == expected_order[k].micro_step);
    }
  }
}

TEST_CASE("bytes per op: params at dtype and gradients once per parameter and activations balance") {
  for (const char* name : {"gpt3-350m", "llama2-7b"}) {  // tied and untied embeddings
    for (DType dtype : {DType::Fp16, DType::Fp32}) {
      CAPTURE(name);
      const ModelConfig& m = *find_catalog_model(name);
      Trace t = generate_trace(m, training(1, 256, 2, true, dtype));
      const std::uint64_t e = bytes_per_element(dtype);
      std::uint64_t grads_step0 = 0, saved = 0, freed = 0;
      for (const auto& op : t.ops) {
        const LayerInfo& l = t.layers[op.layer];
        CHECK(op.param_bytes == l.params_used * e);
        if (op.kind != OpKind::Backward) CHECK(op.grad_bytes == 0);
        if (op.kind == OpKind::Backward && op.micro_step == 0) grads_step0 += op.grad_bytes;
        saved += op.act_saved_bytes;
        freed += op.act_freed_bytes;
      }
      CHECK(grads_step0 == t.total_params() * e);
      CHECK(saved == freed);
      // Tied: the head reads the embedding matrix but does not own it.
      const LayerInfo& head = t.layers.back();
      if (m.tied_embeddings) CHECK(head.params_used == head.params + static_cast<std::uint64_t>(m.vocab) * m.hidden);
      else CHECK(head.params_used == head.params);
    }
  }
}

TEST_CASE("activation bytes follow Korthikanti et al. 2022 for GPT-3 175B") {
  const double s = 2048, b = 4, h = 12288, a = 96, V = 50257, L = 96;
  Trace t = generate_trace(gpt3_175b(), training(4, 2048, 1, false));
  const LayerInfo& block = t.layers[1];
  CHECK(static_cast<double>(block.activation_bytes) == s * b * h * (34 + 5 * a * s / h));
  CHECK(static_cast<double>(block.checkpoint_bytes) == 2 * s * b * h);
  // Without recomputation the peak is at the end of the forward pass: everything is held.
  const double embedding = s * b * h, head = 4 * s * b * h + 4 * s * b * V;
  CHECK(static_cast<double>(t.peak_activation_bytes()) == embedding + L * s * b * h * (34 + 5 * a * s / h) + head);
  // With recomputation: all checkpoints, plus the larger of the head's activations (end of the
  // forward) and one recomputed block's (first recompute, the head already freed).
  Trace r = generate_trace(gpt3_175b(), training(4, 2048, 1, true));
  CHECK(static_cast<double>(r.peak_activation_bytes()) ==
        embedding + L * 2 * s * b * h + std::max(head, s * b * h * (34 + 5 * a * s / h)));
}

TEST_CASE("a framework's score kernels keep what its autograd saves: 4 a s^2 b bytes for Hugging Face OPT, 2 for a masked fill") {
  // Korthikanti's 5 a s^2 b (softmax output, dropout output, 1-byte dropout mask) becomes the clamp's
  // input and the softmax output (OPT's attention dropout is 0), or the softmax output alone.
  const double s = 2048, b = 4, h = 12288, a = 96;
  TrainingConfig hf = training(4, 2048, 1, false);
  hf.attention_scores = AttentionScores::HuggingFaceOpt;
  CHECK(static_cast<double>(generate_trace(gpt3_175b(), hf).layers[1].activation_bytes) == s * b * h * (34 + 4 * a * s / h));
  TrainingConfig fill = hf;
  fill.attention_scores = AttentionScores::MaskedFill;
  CHECK(static_cast<double>(generate_trace(gpt3_175b(), fill).layers[1].activation_bytes) == s * b * h * (34 + 2 * a * s / h));
  fill.memory_efficient_attention = true;  // no scores kept, whatever the kernels would have been
  CHECK(static_cast<double>(generate_trace(gpt3_175b(), fill).layers[1].activation_bytes) == 34 * s * b * h);
}

TEST_CASE("generate_trace rejects training configs that do not fit the model") {
  const ModelConfig& m = gpt3_175b();
  CHECK_THROWS_AS(generate_trace(m, training(1, 4096, 1, false)), std::invalid_argument);
  CHECK_THROWS_AS(generate_trace(m, training(0, 2048, 1, false)), std::invalid_argument);
  CHECK_THROWS_AS(generate_trace(m, training(1, 2048, 0, false)), std::invalid_argument);
  CHECK_THROWS_AS(generate_trace(m, training(1, 0, 1, false)), std::invalid_argument);
  CHECK(parse_dtype("bf16") == DType::Bf16);
  CHECK(parse_dtype("fp16") == DType::Fp16);
  CHECK(parse_dtype("fp32") == DType::Fp32);
  CHECK_THROWS_AS(parse_dtype("fp8"), std::invalid_argument);
  try {
    parse_dtype("bf61");
    FAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "unknown dtype \"bf61\" (did you mean \"bf16\"?); expected \"fp16\", \"bf16\" or \"fp32\"");
  }
}

TEST_CASE("a trace written and read back is identical") {
  for (const char* name : {"gpt3-13b", "llama2-70b", "bert-large"}) {
    CAPTURE(name);
    Trace t = generate_trace(*find_catalog_model(name), training(2, 512, 2, true, DType::Bf16));
    const std::string file = std::string("trace-roundtrip-") + name + ".json";
    save_trace(t, file);
    Trace back = load_trace(file);
    std::remove(file.c_str());
    CHECK(trace_to_json(back) == trace_to_json(t));
    CHECK(back.model == t.model);
    CHECK(back.training == t.training);
    CHECK(back.layers == t.layers);
    CHECK(back.ops == t.ops);
  }
}

TEST_CASE("each op launches its layer's kernels: GEMM shapes and FLOPs of GPT-3 175B") {
  // GPT-3 175B (Brown et al. 2020, table 2.1): d_model 12288, 96 layers, 96 heads, FFN 4 x d_model;
  // the GPT-2 BPE vocabulary of 50257 tokens.  2 sequences of 1024 tokens per micro-batch.
  const double T = 2 * 1024, h = 12288, s = 1024, b = 2, V = 50257;
  Trace t = generate_trace(gpt3_175b(), training(2, 1024, 2, true));
  const TraceOp& fwd = t.ops[1];  // block_0's forward
  REQUIRE(fwd.kind == OpKind::Forward);
  std::vector<std::string> names;
  double gemm_flops = 0;
  for (const auto& k : t.kernels_of(fwd)) {
    names.push_back(k.name);
    if (k.kind == KernelKind::Gemm) gemm_flops += k.flops;
    CHECK(k.kind != KernelKind::Attention);  // unfused: batched GEMMs and elementwise passes
  }
  CHECK(names == std::vector<std::string>{"attention-norm", "qkv", "attention-scores", "attention-softmax",
                                          "attention-context", "attention-out", "ffn-norm", "ffn-up", "activation",
                                          "ffn-down", "residual"});
  // Megatron-LM's count (Narayanan et al. 2021, appendix): 24 T h^2 in the block's GEMMs and 4 b s^2 h in
  // attention's two batched GEMMs, b a of them each: Q K^T (s x 128 by 128 x s), scores x V (s x s by s x 128).
  CHECK(gemm_flops == doctest::Approx(24 * T * h * h + 4 * b * s * s * h).epsilon(1e-12));
  CHECK(t.kernels_of(fwd)[2].gemm == GemmShape{1024, 1024, 128, 2 * 96});
  CHECK(t.kernels_of(fwd)[4].gemm == GemmShape{1024, 128, 1024, 2 * 96});
  // The default 2 passes over the b a s^2 scores (fused scale-mask-softmax, dropout), each reading and writing them.
  CHECK(t.kernels_of(fwd)[3].bytes == doctest::Approx(2.0 * 2 * 2 * (b * 96 * s * s)).epsilon(1e-12));
  CHECK(t.kernels_of(fwd)[1].gemm == GemmShape{2048, 3 * 12288, 12288});
  CHECK(t.kernels_of(fwd)[7].gemm == GemmShape{2048, 4 * 12288, 12288});
  // Backward: each GEMM C[m x n] = A[m x k] B[k x n] as dA (m x n by n x k) then dB (k x m by m x n).
  const TraceOp& bwd = t.ops[t.ops.size() / 2 - 1];  // micro-step 0's last op: the embedding's backward
  REQUIRE(bwd.kind == OpKind::Backward);
  const TraceOp& block_bwd = t.ops[t.ops.size() / 2 - 2];  // block_0's backward (after its recompute)
  REQUIRE(block_bwd.kind == OpKind::Backward);
  REQUIRE(block_bwd.layer == 1);
  const auto& back = t.kernels_of(block_bwd);
  CHECK(back.front().name == "residual backward");
  CHECK(back[1].name == "ffn-down dgrad");
  CHECK(back[1].gemm == GemmShape{2048, 4 * 12288, 12288});
  CHECK(back[2].name == "ffn-down wgrad");
  CHECK(back[2].gemm == GemmShape{4 * 12288, 12288, 2048});
  // The head: LM head T x h by h x V.
  const TraceOp& head = t.ops[97];
  REQUIRE(head.layer == 97);
  CHECK(t.kernels_of(head)[1].gemm == GemmShape{2048, 50257, 12288});
  CHECK(t.kernels_of(head)[1].flops == doctest::Approx(2 * T * h * V).epsilon(1e-12));
  // Every op's kernels carry exactly its FLOPs; recompute launches the forward's kernels.
  for (const auto& op : t.ops) {
    double sum = 0;
    for (const auto& k : t.kernels_of(op)) sum += k.flops;
    CHECK(sum == doctest::Approx(op.flops).epsilon(1e-12));
    if (op.kind == OpKind::Recompute) CHECK(op.kernels == fwd.kernels);
  }
  CHECK(t.kernel_lists.size() == 6);  // embedding, block and head, forward and backward
}

TEST_CASE("each op's kernels name the sub-modules whose parameters it uses") {
  // GPT-3 175B: a block's sub-modules are its two LayerNorms (2h each), QKV (3h^2 + 3h), the
  // attention output (h^2 + h), FFN up (4h^2 + 4h) and down (4h^2 + h): 12h^2 + 13h in all.
  const std::uint64_t h = 12288, V = 50257;
  Trace t = generate_trace(gpt3_175b(), training(2, 1024, 1, true));
  const TraceOp& fwd = t.ops[1];
  std::vector<std::uint64_t> params;
  for (const auto& k : t.kernels_of(fwd))
    if (k.params > 0) params.push_back(k.params);
  CHECK(params == std::vector<std::uint64_t>{2 * h, 3 * h * h + 3 * h, h * h + h, 2 * h, 4 * h * h + 4 * h, 4 * h * h + h});
  // Backward meets them in reverse, each at its input-gradient GEMM (or the norm's backward).
  const TraceOp& bwd = t.ops[t.ops.size() - 2];
  REQUIRE(bwd.kind == OpKind::Backward);
  REQUIRE(bwd.layer == 1);
  std::vector<std::string> names;
  for (const auto& k : t.kernels_of(bwd))
    if (k.params > 0) names.push_back(k.name);
  CHECK(names == std::vector<std::string>{"ffn-down dgrad", "ffn-up dgrad", "ffn-norm backward", "attention-out dgrad",
                                          "qkv dgrad", "attention-norm backward"});
  // The head uses the (tied) embedding matrix: its final norm and V x h.
  const auto& head = t.kernels_of(t.ops[97]);
  CHECK(head[0].params == 2 * h);
  CHECK(head[1].params == V * h);
  // Every op's kernels name exactly the parameters it uses, in bytes at the dtype.
  for (const auto& op : t.ops) {
    std::uint64_t sum = 0;
    for (const auto& k : t.kernels_of(op)) sum += k.params;
    CHECK(sum * 2 == op.param_bytes);
  }
  // The norms are row reductions (ffn-norm: its 2 passes of 5, the other 3 the residual add
  // before it), backward twice forward; GEMMs and the other elementwise kernels stream.
  const auto& fk = t.kernels_of(fwd);
  const double norm = 2.0 * 2 * (2 * 1024) * static_cast<double>(h);  // 2 x 1024 tokens, 2 bytes in and out
  CHECK(fk[0].reduction_bytes == doctest::Approx(norm).epsilon(1e-12));
  CHECK(fk[0].reduction_bytes == fk[0].bytes);
  CHECK(fk[6].reduction_bytes == doctest::Approx(norm).epsilon(1e-12));
  CHECK(fk[6].bytes == doctest::Approx(2.5 * norm).epsilon(1e-12));
  for (std::size_t i : {1, 2, 4, 5, 7, 8, 9, 10}) CHECK(fk[i].reduction_bytes == 0);
  for (const auto& k : t.kernels_of(bwd))
    if (k.name == "ffn-norm backward") CHECK(k.reduction_bytes == doctest::Approx(2 * norm).epsilon(1e-12));
  CHECK(head[0].reduction_bytes == head[0].bytes);  // the final norm
  // They survive the JSON round trip, and a file whose kernels name other counts is rejected there.
  Json doc = trace_to_json(t);
  CHECK(trace_from_json(JsonNode(doc, "t.json")).kernel_lists == t.kernel_lists);
  for (auto& k : doc["kernel_lists"][static_cast<std::size_t>(fwd.kernels)])
    if (k.contains("params")) k["params"] = k["params"].get<std::uint64_t>() + 1;
  try {
    trace_from_json(JsonNode(doc, "t.json"));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("param_bytes") != std::string::npos);
  }
}

TEST_CASE("a version 1 trace (one representative GEMM per op) loads with its layers' kernels") {
  Trace t = generate_trace(*find_catalog_model("gpt3-125m"), training(2, 256, 2, true, DType::Bf16));
  Json old = trace_to_json(t);
  old["version"] = 1;
  old.erase("kernel_lists");
  old.erase("layout");  // version 3's
  old.erase("stage");
  for (auto& op : old["ops"]) {
    op.erase("kernels");
    op["gemm"] = {{"m", 512}, {"n", 768}, {"k", 768}};
  }
  const Trace back = trace_from_json(JsonNode(old, "old.json"));
  CHECK(back.ops == t.ops);
  CHECK(back.kernel_lists == t.kernel_lists);
  // Its "gemm" is still checked.
  old["ops"][2]["gemm"]["m"] = 0;
  CHECK_THROWS_AS(trace_from_json(JsonNode(old, "old.json")), InputError);
}

TEST_CASE("a trace with Hugging Face OPT's score kernels reads back equal, broadcast bytes included") {
  TrainingConfig hf = training(2, 256, 1, true, DType::Bf16);
  hf.attention_scores = AttentionScores::HuggingFaceOpt;
  const Trace t = generate_trace(*find_catalog_model("opt-1.3b"), hf);
  const Trace back = trace_from_json(JsonNode(trace_to_json(t), "t.json"));
  CHECK(back.training == t.training);
  CHECK(back.kernel_lists == t.kernel_lists);
  bool broadcast = false;
  for (const auto& list : back.kernel_lists)
    for (const auto& k : list) broadcast = broadcast || k.broadcast_bytes > 0;
  CHECK(broadcast);
}

TEST_CASE("malformed traces are InputErrors naming the JSON path") {
  Trace t = generate_trace(*find_catalog_model("gpt3-125m"), training(1, 64, 2, false));
  const Json good = trace_to_json(t);
  auto error_of = [](const Json& doc) -> std::string {
    try {
      trace_from_json(JsonNode(doc, "bad.json"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return "";
  };
  auto expect_error_at = [&](Json doc, const std::string& path) {
    std::string e = error_of(doc);
    CAPTURE(e);
    CHECK(e.find("bad.json") != std::string::npos);
    CHECK(e.find(path) != std::string::npos);
  };
  CHECK(error_of(good).empty());
  {
    Json over = good;  // a kernel's row-reduction bytes above its bytes
    for (auto& list : over["kernel_lists"])
      for (auto& k : list)
        if (k.contains("reduction_bytes")) k["reduction_bytes"] = k["bytes"].get<double>() * 2;
    expect_error_at(over, ".reduction_bytes");
    CHECK(error_of(over).find("part of its bytes") != std::string::npos);
  }
  {
    Json over = good;  // broadcast bytes that, with the row reduction's, exceed the kernel's bytes
    for (auto& list : over["kernel_lists"])
      for (auto& k : list)
        if (k.contains("reduction_bytes")) k["broadcast_bytes"] = k["bytes"].get<double>() - k["reduction_bytes"].get<double>() + 1;
    expect_error_at(over, ".broadcast_bytes");
    CHECK(error_of(over).find("parts of its bytes") != std::string::npos);
    Json gemm = good;  // only elementwise kernels have them
    std::string path;
    for (std::size_t list = 0; list < gemm["kernel_lists"].size() && path.empty(); ++list)
      for (std::size_t i = 0; i < gemm["kernel_lists"][list].size() && path.empty(); ++i)
        if (gemm["kernel_lists"][list][i]["kind"] == "gemm") {
          gemm["kernel_lists"][list][i]["broadcast_bytes"] = 1;
          path = "$.kernel_lists[" + std::to_string(list) + "][" + std::to_string(i) + "].broadcast_bytes";
        }
    REQUIRE_FALSE(path.empty());
    expect_error_at(gemm, path);
  }
  Json d = good;
  d["version"] = 4;
  expect_error_at(d, "$.version");
  d = good;
  d["ops"][5]["layer"] = 99;
  expect_error_at(d, "$.ops[5].layer");
  d = good;
  d["ops"][3]["micro_step"] = 2;  // grad_accum is 2: steps 0 and 1
  expect_error_at(d, "$.ops[3].micro_step");
  d = good;
  d["ops"][0]["flops"] = -1;
  expect_error_at(d, "$.ops[0].flops");
  d = good;
  d["ops"][0]["grad_bytes"] = 8;  // a forward op
  expect_error_at(d, "$.ops[0].grad_bytes");
  d = good;
  d["ops"][2]["kernels"] = 6;  // six lists: 0..5
  expect_error_at(d, "$.ops[2].kernels");
  d = good;
  d["ops"][2]["flops"] = d["ops"][2]["flops"].get<double>() * 1.01;  // no longer what its kernels add up to
  expect_error_at(d, "$.ops[2].flops");
  d = good;
  d["ops"][2]["gemm"] = {{"m", 1}, {"n", 1}, {"k", 1}};  // version 2 ops have kernels, not a shape
  expect_error_at(d, "$.ops[2].gemm");
  d = good;
  d["kernel_lists"][1][1]["gemm"]["m"] = 0;
  expect_error_at(d, "$.kernel_lists[1][1].gemm.m");
  d = good;
  d["kernel_lists"][1][1].erase("gemm");
  expect_error_at(d, "$.kernel_lists[1][1]");
  d = good;
  d["kernel_lists"][1][0]["gemm"] = {{"m", 1}, {"n", 1}, {"k", 1}};  // an elementwise kernel
  expect_error_at(d, "$.kernel_lists[1][0].gemm");
  d = good;
  d["kernel_lists"][1][1]["kind"] = "conv";
  expect_error_at(d, "$.kernel_lists[1][1].kind");
  d = good;
  d["layers"][2]["params"] = "many";
  expect_error_at(d, "$.layers[2].params");
  d = good;
  d["layers"][0]["kind"] = "head";
  expect_error_at(d, "$.layers[0].kind");
  d = good;
  d["training"]["seq_len"] = 4096;
  expect_error_at(d, "$.training.seq_len");
  d = good;
  d["model"]["heads"] = 0;
  expect_error_at(d, "$.model.heads");
  // Named values: the nearest name suggested, all of them listed.
  d = good;
  d["ops"][4]["kind"] = "forwrd";
  expect_error_at(d, "$.ops[4].kind");
  CHECK(error_of(d).find("unknown op kind \"forwrd\" (did you mean \"forward\"?); expected \"forward\", "
                         "\"recompute\", \"backward\", \"tensor-all-reduce\"") != std::string::npos);
  d = good;
  d["layers"][1]["kind"] = "transfomer";
  expect_error_at(d, "$.layers[1].kind");
  CHECK(error_of(d).find("did you mean \"transformer\"") != std::string::npos);
  d = good;
  d["training"]["dtype"] = "fq16";
  expect_error_at(d, "$.training.dtype");
  CHECK(error_of(d).find("unknown dtype \"fq16\" (did you mean \"fp16\"?)") != std::string::npos);
  d = good;
  d["format"] = "luwusim-trac";
  expect_error_at(d, "$.format");
  CHECK(error_of(d).find("did you mean \"luwusim-trace\"") != std::string::npos);
  d = good;
  d["model"]["heads"] = 0;
  expect_error_at(d, "$.model.heads");
  d = good;
  d["opps"] = Json::array();
  expect_error_at(d, "$.opps");
  d = good;
  d.erase("layers");
  expect_error_at(d, "layers");
}

TEST_CASE("memory-efficient attention drops the 5as^2b activation term and recomputes Q K^T in backward") {
  const double s = 2048, b = 2, h = 12288;
  TrainingConfig plain = training(2, 2048, 1, false), efficient = plain;
  efficient.memory_efficient_attention = true;
  Trace p = generate_trace(gpt3_175b(), plain), t = generate_trace(gpt3_175b(), efficient);
  CHECK(static_cast<double>(t.layers[1].activation_bytes) == 34 * s * b * h);  // Korthikanti's sbh(34 + 0)
  CHECK(t.layers[1].forward_flops == p.layers[1].forward_flops);
  CHECK(t.layers[1].backward_flops == p.layers[1].backward_flops + 2 * b * s * s * h);
  CHECK(t.layers.back() == p.layers.back());  // the head is unchanged
}

TEST_CASE("unfused attention: Hugging Face's layout copies are a setting, each T x h read and written once each way") {
  // GPT-3 175B, 2 x 1024 tokens: OPTAttention's q scaling, q, k and v made contiguous per head and
  // the context reshaped back: 5 copies of 2048 x 12288 elements, 2 bytes each, read and written.
  const double tokens = 2 * 1024.0, h = 12288, e = 2;
  TrainingConfig hf = training(2, 1024, 1, false);
  hf.attention_layout_copies = 5;
  Trace t = generate_trace(gpt3_175b(), hf);
  const auto& fwd = t.kernels_of(t.ops[1]);
  REQUIRE(fwd.size() > 3);
  REQUIRE(fwd[2].name == "attention-layout");
  CHECK(fwd[2].kind == KernelKind::Elementwise);
  CHECK(fwd[3].name == "attention-scores");
  CHECK(fwd[2].bytes == doctest::Approx(5 * 2 * e * tokens * h).epsilon(1e-12));
  CHECK(fwd[2].flops == 0);
  // Backward copies the gradients back (and scales dq): as many bytes, not an elementwise's twice.
  const TraceOp* bwd = nullptr;
  for (const auto& op : t.ops)
    if (op.kind == OpKind::Backward && op.layer == 1) bwd = &op;
  REQUIRE(bwd != nullptr);
  double backward_bytes = -1;
  for (const auto& k : t.kernels_of(*bwd))
    if (k.name == "attention-layout backward") backward_bytes = k.bytes;
  CHECK(backward_bytes == doctest::Approx(5 * 2 * e * tokens * h).epsilon(1e-12));
  // Megatron's default (0) adds no kernel; memory-efficient attention none either; 17 is refused.
  const Trace megatron = generate_trace(gpt3_175b(), training(2, 1024, 1, false));
  CHECK(megatron.kernels_of(megatron.ops[1]).size() == fwd.size() - 1);
  TrainingConfig fused = hf;
  fused.memory_efficient_attention = true;
  const Trace fused_trace = generate_trace(gpt3_175b(), fused);
  for (const auto& k : fused_trace.kernels_of(fused_trace.ops[1])) CHECK(k.name != "attention-layout");
  hf.attention_layout_copies = 17;
  CHECK_THROWS_AS(generate_trace(gpt3_175b(), hf), std::invalid_argument);
}

TEST_CASE("unfused attention: the score passes are a setting, and backward is four batched GEMMs") {
  // GPT-3 175B, 2 x 1024 tokens: 2 x 96 = 192 score matrices of 1024 x 1024, 2 bytes each.
  const double scores = 2 * 96 * 1024.0 * 1024.0, e = 2;
  TrainingConfig hf = training(2, 1024, 1, false);
  hf.attention_score_passes = 3;  // Hugging Face's OPTAttention: mask add, clamp, softmax
  Trace t = generate_trace(gpt3_175b(), hf);
  const auto& fwd = t.kernels_of(t.ops[1]);
  REQUIRE(fwd[3].name == "attention-softmax");
  CHECK(fwd[3].bytes == doctest::Approx(3 * 2 * e * scores).epsilon(1e-12));
  // Backward (reverse order): dP = dO V^T and dV = P^T dO, the passes reading two tensors and
  // writing one, then dQ = dS K and dK^T = Q^T dS; four GEMMs of 2 b a s^2 d_head FLOPs each.
  const TraceOp* bwd = nullptr;
  for (const auto& op : t.ops)
    if (op.kind == OpKind::Backward && op.layer == 1) bwd = &op;
  REQUIRE(bwd != nullptr);
  std::vector<const Kernel*> attention;
  for (const auto& k : t.kernels_of(*bwd))
    if (k.name.rfind("attention-", 0) == 0 && k.name.rfind("attention-out", 0) != 0 && k.name.rfind("attention-norm", 0) != 0)
      attention.push_back(&k);
  REQUIRE(attention.size() == 5);
  CHECK(attention[0]->gemm == GemmShape{1024, 1024, 128, 192});  // dP: (s x d) by (d x s)
  CHECK(attention[1]->gemm == GemmShape{1024, 128, 1024, 192});  // dV^T-shaped: (s x s) by (s x d)
  CHECK(attention[2]->bytes == doctest::Approx(3 * 3 * e * scores).epsilon(1e-12));
  CHECK(attention[3]->gemm == GemmShape{1024, 128, 1024, 192});  // dQ
  CHECK(attention[4]->gemm == GemmShape{128, 1024, 1024, 192});  // dK^T
  // Of the 3 passes the softmax (one) is a row reduction: 2 e scores forward, 1.5 times that backward.
  CHECK(fwd[3].reduction_bytes == doctest::Approx(2 * e * scores).epsilon(1e-12));
  CHECK(attention[2]->reduction_bytes == doctest::Approx(1.5 * 2 * e * scores).epsilon(1e-12));
  double flops = 0;
  for (const auto* k : attention) flops += k->flops;
  CHECK(flops == doctest::Approx(2 * 4 * 2 * 1024.0 * 1024.0 * 12288).epsilon(1e-12));  // twice the forward's 4 b s^2 h
  // No passes: the two GEMMs alone; a setting beyond the bound is refused.
  TrainingConfig none = hf;
  none.attention_score_passes = 0;
  CHECK(generate_trace(gpt3_175b(), none).kernels_of(generate_trace(gpt3_175b(), none).ops[1]).size() == fwd.size() - 1);
  none.attention_score_passes = 17;
  CHECK_THROWS_AS(generate_trace(gpt3_175b(), none), std::invalid_argument);
}

TEST_CASE("attention scores as a framework runs them: Hugging Face OPT and a masked fill, from PyTorch's kernels") {
  // GPT-3 175B, 2 x 1024 tokens, bf16: N = 2 x 96 x 1024^2 score elements of e = 2 bytes.
  const double N = 2 * 96 * 1024.0 * 1024.0, e = 2, mask = 2 * 1024.0 * 1024.0;
  auto scores_kernels = [](const Trace& t, OpKind kind) {
    const TraceOp* op = nullptr;
    for (const auto& o : t.ops)
      if (o.kind == kind && o.layer == 1 && op == nullptr) op = &o;
    REQUIRE(op != nullptr);
    std::vector<Kernel> out;
    for (const auto& k : t.kernels_of(*op))
      if (k.kind == KernelKind::Elementwise && k.name.rfind("attention-", 0) == 0 && k.name.rfind("attention-norm", 0) != 0)
        out.push_back(k);
    return out;
  };
  TrainingConfig hf = training(2, 1024, 1, false, DType::Bf16);
  hf.attention_scores = AttentionScores::HuggingFaceOpt;
  const Trace opt = generate_trace(gpt3_175b(), hf);
  const auto fwd = scores_kernels(opt, OpKind::Forward);
  REQUIRE(fwd.size() == 3);
  // + attention_mask: the scores read and written, the [b, 1, s, s] mask read once; all broadcast.
  CHECK(fwd[0].name == "attention-mask-add");
  CHECK(fwd[0].bytes == doctest::Approx(2 * e * N + e * mask).epsilon(1e-12));
  CHECK(fwd[0].broadcast_bytes == fwd[0].bytes);
  // torch.max against a 0-dim tensor: read and written, broadcast.
  CHECK(fwd[1].name == "attention-clamp");
  CHECK(fwd[1].bytes == doctest::Approx(2 * e * N).epsilon(1e-12));
  CHECK(fwd[1].broadcast_bytes == fwd[1].bytes);
  // The softmax, a row reduction.
  CHECK(fwd[2].name == "attention-softmax");
  CHECK(fwd[2].reduction_bytes == doctest::Approx(2 * e * N).epsilon(1e-12));
  CHECK(fwd[2].broadcast_bytes == 0);
  // Backward: the softmax's (3 tensors, streamed), then maximum's five kernels: grad / 2 (2 e),
  // self == other (e + 1), where (3 e + 1), self < other (e + 1), masked_fill_ (2 e + 1) = 22 bytes
  // per element in bf16, the two comparisons (6 bytes) broadcast; the add's gradient is the sum's.
  const auto bwd = scores_kernels(opt, OpKind::Backward);
  REQUIRE(bwd.size() == 2);
  CHECK(bwd[0].name == "attention-softmax backward");
  CHECK(bwd[0].bytes == doctest::Approx(3 * e * N).epsilon(1e-12));
  CHECK(bwd[0].reduction_bytes == 0);
  CHECK(bwd[1].name == "attention-clamp backward");
  CHECK(bwd[1].bytes == doctest::Approx(22 * N).epsilon(1e-12));
  CHECK(bwd[1].broadcast_bytes == doctest::Approx(6 * N).epsilon(1e-12));

  // A masked fill with a [s, s] boolean mask: clone (2 e) and fill in place (2 e + the mask, broadcast),
  // the softmax; backward the softmax's and the same clone and fill of the gradient.
  TrainingConfig fill = hf;
  fill.attention_scores = AttentionScores::MaskedFill;
  const Trace gpt = generate_trace(gpt3_175b(), fill);
  const auto ffwd = scores_kernels(gpt, OpKind::Forward);
  REQUIRE(ffwd.size() == 2);
  CHECK(ffwd[0].name == "attention-mask-fill");
  CHECK(ffwd[0].bytes == doctest::Approx(4 * e * N + 1024.0 * 1024.0).epsilon(1e-12));
  CHECK(ffwd[0].broadcast_bytes == doctest::Approx(2 * e * N + 1024.0 * 1024.0).epsilon(1e-12));
  const auto fbwd = scores_kernels(gpt, OpKind::Backward);
  REQUIRE(fbwd.size() == 2);
  CHECK(fbwd[0].bytes == doctest::Approx(3 * e * N).epsilon(1e-12));
  CHECK(fbwd[1].name == "attention-mask-fill backward");
  CHECK(fbwd[1].bytes == ffwd[0].bytes);
  CHECK(fbwd[1].broadcast_bytes == ffwd[0].broadcast_bytes);

  // Memory-efficient attention has none of them; the FLOPs do not change.
  TrainingConfig fused = hf;
  fused.memory_efficient_attention = true;
  CHECK(scores_kernels(generate_trace(gpt3_175b(), fused), OpKind::Forward).empty());
  TrainingConfig passes = hf;
  passes.attention_scores = AttentionScores::Passes;
  auto kernel_flops = [](const Trace& t) {
    double sum = 0;
    for (const auto& op : t.ops)
      for (const auto& k : t.kernels_of(op)) sum += k.flops;
    return sum;
  };
  CHECK(kernel_flops(generate_trace(gpt3_175b(), passes)) == doctest::Approx(kernel_flops(opt)).epsilon(1e-12));
}
