// Per-stage traces of a tensor x pipeline x data layout: every expectation is a closed form
// (Megatron-LM's split, Korthikanti et al. 2022's activation counts, the 1F1B and GPipe orders).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/input_error.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/stage_trace.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

using u64 = std::uint64_t;

TrainingConfig training(int b, int s, int m, bool recompute, bool efficient = false) {
  TrainingConfig t;
  t.micro_batch = b;
  t.seq_len = s;
  t.grad_accum = m;
  t.recompute = recompute;
  t.memory_efficient_attention = efficient;
  t.dtype = DType::Bf16;
  return t;
}

ParallelLayout layout(int tensor, int pipeline, bool sp = false, PipelineSchedule schedule = PipelineSchedule::OneFOneB) {
  ParallelLayout l;
  l.tensor = tensor;
  l.pipeline = pipeline;
  l.sequence_parallel = sp;
  l.pipeline_schedule = schedule;
  return l;
}

// The LuWu paper's Custom-175B: 96 blocks, hidden 12288, 96 heads, FFN 4h, vocab 50272 (OPT's,
// divisible by 8), learned positions (2048), tied embeddings, LayerNorm, biases.
const ModelConfig& custom_175b() { return *find_catalog_model("custom-175b"); }

// A small GPT whose vocabulary 8 does not divide (GPT-2's 50257): 10 blocks over 4 stages (3, 3, 2, 2).
ModelConfig small_gpt(bool tied) {
  ModelConfig m = *find_catalog_model("gpt3-125m");  // 12 blocks, 768, 12 heads, 50257
  m.layers = 10;
  m.tied_embeddings = tied;
  return m;
}

bool is_comm(const TraceOp& op) { return !is_compute(op.kind); }

}  // namespace

TEST_CASE("layout 1 x 1 x 1 gives exactly generate_trace's trace") {
  for (const char* name : {"gpt3-350m", "llama2-7b", "custom-175b"}) {
    for (bool recompute : {false, true}) {
      CAPTURE(name);
      CAPTURE(recompute);
      const ModelConfig& m = *find_catalog_model(name);
      const TrainingConfig t = training(2, 256, 3, recompute, recompute);
      const Trace whole = generate_trace(m, t);
      const Trace stage = generate_stage_trace(m, t, ParallelLayout{}, 0);
      CHECK(stage.layers == whole.layers);
      CHECK(stage.kernel_lists == whole.kernel_lists);
      CHECK(stage.ops == whole.ops);
      CHECK(stage.layout == ParallelLayout{});
    }
  }
}

TEST_CASE("blocks over stages: floor(L / p) each, one more on the first L mod p, embedding first and head last") {
  CHECK(stage_blocks(96, 16, 0).first == 0);
  CHECK(stage_blocks(96, 16, 15).first == 90);
  CHECK(stage_blocks(96, 16, 15).count == 6);
  const int counts[] = {3, 3, 2, 2}, firsts[] = {0, 3, 6, 8};
  for (int s = 0; s < 4; ++s) {
    CHECK(stage_blocks(10, 4, s).count == counts[s]);
    CHECK(stage_blocks(10, 4, s).first == firsts[s]);
  }
  const ModelConfig m = small_gpt(true);
  const auto first = stage_layer_infos(m, training(1, 64, 1, false), layout(1, 4), 0);
  const auto last = stage_layer_infos(m, training(1, 64, 1, false), layout(1, 4), 3);
  REQUIRE(first.size() == 4);
  CHECK(first.front().kind == LayerKind::Embedding);
  CHECK(first[3].name == "block_2");
  REQUIRE(last.size() == 3);
  CHECK(last.front().name == "block_8");
  CHECK(last.back().kind == LayerKind::Head);
  CHECK(stage_layer_infos(m, training(1, 64, 1, false), layout(1, 4), 1).size() == 3);
}

TEST_CASE("stage FLOPs x tensor summed over stages are the unsharded model's") {
  // Custom-175B, TP 8 x PP 16 (the paper's scale-out layout): vocab 50272 splits evenly, so the
  // sum is the whole model's up to rounding.
  const TrainingConfig t = training(2, 1024, 3, true);
  const Trace whole = generate_trace(custom_175b(), t);
  double forward = 0, backward = 0, recompute = 0;
  for (int s = 0; s < 16; ++s) {
    const Trace stage = generate_stage_trace(custom_175b(), t, layout(8, 16), s);
    forward += 8 * stage.flops_of(OpKind::Forward);
    backward += 8 * stage.flops_of(OpKind::Backward);
    recompute += 8 * stage.flops_of(OpKind::Recompute);
  }
  CHECK(forward == doctest::Approx(whole.flops_of(OpKind::Forward)).epsilon(1e-12));
  CHECK(backward == doctest::Approx(whole.flops_of(OpKind::Backward)).epsilon(1e-12));
  CHECK(recompute == doctest::Approx(whole.flops_of(OpKind::Recompute)).epsilon(1e-12));

  // GPT-2's vocabulary 50257 over 4: 12565 rows each, 3 padding rows of LM head FLOPs (2 T h x 3
  // forward, twice that backward) per micro-batch.
  const ModelConfig m = small_gpt(false);
  const TrainingConfig small = training(2, 128, 2, false);
  const Trace unsharded = generate_trace(m, small);
  double sum = 0;
  for (int s = 0; s < 2; ++s) sum += 4 * generate_stage_trace(m, small, layout(4, 2), s).flops_per_iteration();
  const double T = 2 * 128, h = 768;
  CHECK(sum == doctest::Approx(unsharded.flops_per_iteration() + 2 * (2 * T * h * 3) * 3).epsilon(1e-12));
}

TEST_CASE("stage parameters x tensor summed over stages: the model's plus the replicated pieces") {
  // Custom-175B, TP 8: per GPU a block holds 12h^2/8 of matrices, QKV and FFN-up biases (3h + 4h)/8,
  // the attention-out and FFN-down biases (h each) and both LayerNorms (2h each) whole.
  const u64 h = 12288, V = 50272, S = 2048, L = 96, t = 8, p = 16;
  const TrainingConfig tr = training(1, 1024, 1, false);
  const Trace whole = generate_trace(custom_175b(), tr);
  u64 sum = 0;
  for (int s = 0; s < 16; ++s) {
    const Trace stage = generate_stage_trace(custom_175b(), tr, layout(8, 16), s);
    for (const auto& l : stage.layers)
      if (l.kind == LayerKind::Transformer) CHECK(l.params == 12 * h * h / t + 7 * h / t + 2 * h + 4 * h);
    sum += t * stage.total_params();
  }
  // Replicated on each of the t GPUs: per block the two norms and two row-parallel biases (6h),
  // the position table (S h) and the final norm (2h); and the last stage's copy of the tied
  // embedding matrix (V h over the group).
  const u64 replicated = L * 6 * h + S * h + 2 * h;
  CHECK(sum == whole.total_params() + (t - 1) * replicated + V * h);
  (void)p;

  // One stage, no tensor parallelism: the unsharded model exactly (the embedding owns the tied matrix).
  CHECK(generate_stage_trace(custom_175b(), tr, layout(8, 1), 0).total_params() * t ==
        whole.total_params() + (t - 1) * replicated);
  // Untied GPT-2 vocabulary over 4: ceil(50257 / 4) = 12565 rows in the embedding and in the head.
  const ModelConfig m = small_gpt(false);
  const Trace small = generate_trace(m, tr);
  const u64 hs = 768;
  u64 small_sum = 0;
  for (int s = 0; s < 2; ++s) small_sum += 4 * generate_stage_trace(m, tr, layout(4, 2), s).total_params();
  CHECK(small_sum == small.total_params() + 3 * (10 * 6 * hs + 2048 * hs + 2 * hs) + 2 * 3 * hs);
}

TEST_CASE("the kernels of a tensor-parallel block: Megatron's column and row splits") {
  const double T = 2 * 1024, h = 12288;
  ModelConfig fused = custom_175b();  // Megatron projects Q, K and V in one GEMM
  fused.separate_qkv = false;
  const Trace t = generate_stage_trace(fused, training(2, 1024, 1, false), layout(8, 16), 3);
  const TraceOp& fwd = t.ops[2];  // after the activation's receive and the all-gather of its split
  REQUIRE(fwd.kind == OpKind::Forward);
  const auto& k = t.kernels_of(fwd);
  CHECK(k[1].gemm == GemmShape{2048, 3 * 12288 / 8, 12288});       // QKV, column-parallel
  CHECK(k[5].gemm == GemmShape{2048, 12288, 12288 / 8});           // attention-out, row-parallel
  CHECK(k[7].gemm == GemmShape{2048, 4 * 12288 / 8, 12288});       // FFN up, column-parallel
  CHECK(k[9].gemm == GemmShape{2048, 12288, 4 * 12288 / 8});       // FFN down, row-parallel
  CHECK(k[0].output_elements == T * h);                            // the norm on every token, replicated
  // Attention on this GPU's 96 / 8 heads: Q K^T and scores x V, 2 x 12 batched GEMMs each.
  CHECK(k[2].gemm == GemmShape{1024, 1024, 128, 2 * 12});
  CHECK(k[4].gemm == GemmShape{1024, 128, 1024, 2 * 12});
  CHECK(k[2].flops + k[4].flops == doctest::Approx(4 * 2 * 1024.0 * 1024 * h / 8).epsilon(1e-15));
  // The catalog's Custom-175B projects them as Hugging Face's OPT does: q, k and v, each column-parallel.
  const Trace hf = generate_stage_trace(custom_175b(), training(2, 1024, 1, false), layout(8, 16), 3);
  const auto& hk = hf.kernels_of(hf.ops[2]);
  for (std::size_t i : {1, 2, 3}) CHECK(hk[i].gemm == GemmShape{2048, 12288 / 8, 12288});
  for (const auto& op : t.ops) {
    double flops = 0;
    u64 params = 0;
    for (const auto& kernel : t.kernels_of(op)) flops += kernel.flops, params += kernel.params;
    CHECK(flops == doctest::Approx(op.flops).epsilon(1e-12));
    CHECK(params * 2 == op.param_bytes);
    if (is_comm(op)) CHECK(t.kernels_of(op).empty());
  }
  // Sequence parallel: the norms run on s / 8 of the sequence.
  const Trace sp = generate_stage_trace(fused, training(2, 1024, 1, false), layout(8, 16, true), 3);
  CHECK(sp.kernels_of(sp.ops[1])[0].output_elements == T * h / 8);
}

TEST_CASE("activations per tensor-parallel block follow Korthikanti et al. 2022 section 4.2") {
  // s b h (10 + 24 / t + 5 a s / (h t)) bytes per block at 16 bits; with sequence parallelism
  // s b h (34 + 5 a s / h) / t.  Checkpoint: s b h x 2 bytes, / t with sequence parallelism.
  const double s = 1024, b = 2, h = 12288, a = 96, t = 8;
  const TrainingConfig tr = training(2, 1024, 1, false);
  const LayerInfo tp = stage_layer_infos(custom_175b(), tr, layout(8, 16), 5).front();
  const LayerInfo sp = stage_layer_infos(custom_175b(), tr, layout(8, 16, true), 5).front();
  CHECK(static_cast<double>(tp.activation_bytes) == s * b * h * (10 + 24 / t + 5 * a * s / (h * t)));
  CHECK(static_cast<double>(sp.activation_bytes) == s * b * h * (34 + 5 * a * s / h) / t);
  CHECK(static_cast<double>(tp.checkpoint_bytes) == 2 * s * b * h);
  CHECK(static_cast<double>(sp.checkpoint_bytes) == 2 * s * b * h / t);
}

TEST_CASE("tensor-parallel collectives per block and pass: 2 all-reduces of b s h bytes, or reduce-scatters and all-gathers") {
  const u64 B = 2 * 256 * 12288 * 2;  // b s h x bf16
  for (bool sp : {false, true}) {
    CAPTURE(sp);
    // The pipeline's own all-gathers (scatter_gather_tensors_in_pipeline) are tested below.
    ParallelLayout l = layout(8, 16, sp);
    l.scatter_gather_tensors_in_pipeline = false;
    const Trace t = generate_stage_trace(custom_175b(), training(2, 256, 2, true), l, 7);
    // Each collective belongs to the pass of the compute op before it.
    std::map<std::pair<OpKind, OpKind>, int> count;  // (pass, collective kind) -> count, one block and micro-batch
    std::map<OpKind, u64> bytes;
    OpKind pass = OpKind::Forward;
    for (const auto& op : t.ops) {
      if (is_compute(op.kind)) pass = op.kind;
      if (!is_tensor_collective(op.kind)) continue;
      CHECK(op.comm_bytes == B);
      if (op.layer == 2 && op.micro_step == 1) ++count[{pass, op.kind}];
      bytes[pass] += op.comm_bytes;
    }
    const int blocks = 6, micro_batches = 2;
    if (!sp) {
      for (OpKind p : {OpKind::Forward, OpKind::Recompute, OpKind::Backward}) {
        CHECK(count[{p, OpKind::TensorAllReduce}] == 2);
        CHECK(bytes[p] == blocks * micro_batches * 2 * B);
      }
      CHECK(count[{OpKind::Forward, OpKind::TensorAllGather}] == 0);
    } else {
      for (OpKind p : {OpKind::Forward, OpKind::Recompute}) {
        CHECK(count[{p, OpKind::TensorAllGather}] == 2);
        CHECK(count[{p, OpKind::TensorReduceScatter}] == 2);
        CHECK(count[{p, OpKind::TensorAllReduce}] == 0);
      }
      // Backward also gathers the two column-parallel inputs again for their weight gradients.
      CHECK(count[{OpKind::Backward, OpKind::TensorAllGather}] == 4);
      CHECK(count[{OpKind::Backward, OpKind::TensorReduceScatter}] == 2);
    }
  }
  // No tensor parallelism, no collectives.
  const Trace none = generate_stage_trace(custom_175b(), training(2, 256, 2, true), layout(1, 16), 7);
  for (const auto& op : none.ops) CHECK_FALSE(is_tensor_collective(op.kind));
}

TEST_CASE("the embedding and head collectives of vocab-parallel layers") {
  const u64 b = 2, s = 256, h = 12288, B = b * s * h * 2;
  const TrainingConfig tr = training(2, 256, 1, false);
  auto kinds_of_layer = [](const Trace& t, int layer) {
    std::vector<std::pair<OpKind, u64>> out;
    for (const auto& op : t.ops)
      if (is_tensor_collective(op.kind) && op.layer == layer) out.emplace_back(op.kind, op.comm_bytes);
    return out;
  };
  const Trace first = generate_stage_trace(custom_175b(), tr, layout(8, 16), 0);
  CHECK(kinds_of_layer(first, 0) == std::vector<std::pair<OpKind, u64>>{{OpKind::TensorAllReduce, B}});
  const Trace last = generate_stage_trace(custom_175b(), tr, layout(8, 16), 15);
  const int head = static_cast<int>(last.layers.size()) - 1;
  // Forward: the cross entropy's 3 all-reduces of b s fp32 values; backward: the LM head's input gradient.
  CHECK(kinds_of_layer(last, head) == std::vector<std::pair<OpKind, u64>>{{OpKind::TensorAllReduce, 4 * b * s},
                                                                          {OpKind::TensorAllReduce, 4 * b * s},
                                                                          {OpKind::TensorAllReduce, 4 * b * s},
                                                                          {OpKind::TensorAllReduce, B}});
  const Trace last_sp = generate_stage_trace(custom_175b(), tr, layout(8, 16, true), 15);
  CHECK(kinds_of_layer(last_sp, head).size() == 1 + 3 + 2);
}

TEST_CASE("pipeline transfers: activations forward and gradients backward, only to neighbours") {
  const u64 b = 2, s = 256, h = 12288, e = 2;
  const int p = 4, m = 5;
  for (bool sp : {false, true}) {
    CAPTURE(sp);
    const ModelConfig& model = custom_175b();
    for (int stage = 0; stage < p; ++stage) {
      CAPTURE(stage);
      const Trace t = generate_stage_trace(model, training(2, 256, m, false), layout(8, p, sp), stage);
      std::map<OpKind, int> count;
      for (const auto& op : t.ops)
        if (is_pipeline_transfer(op.kind)) {
          ++count[op.kind];
          // Split by sequence (sequence parallelism) or scattered over the tensor group (Megatron's default).
          CHECK(op.comm_bytes == b * s * h * e / 8);
        }
      CHECK(count[OpKind::RecvActivation] == (stage > 0 ? m : 0));
      CHECK(count[OpKind::SendGradient] == (stage > 0 ? m : 0));
      CHECK(count[OpKind::SendActivation] == (stage < p - 1 ? m : 0));
      CHECK(count[OpKind::RecvGradient] == (stage < p - 1 ? m : 0));
    }
  }
  // A middle stage's forward: receive, the layers, send; its backward: receive, the layers in reverse, send.
  const Trace mid = generate_stage_trace(custom_175b(), training(1, 64, 1, false), layout(1, 16), 4);
  REQUIRE(mid.ops.size() == 2 + 6 + 6 + 2);
  CHECK(mid.ops.front().kind == OpKind::RecvActivation);
  CHECK(mid.ops[7].kind == OpKind::SendActivation);
  CHECK(mid.ops[8].kind == OpKind::RecvGradient);
  CHECK(mid.ops[8].layer == 5);
  CHECK(mid.ops.back().kind == OpKind::SendGradient);
  CHECK(mid.ops.back().layer == 0);
}

TEST_CASE("1F1B: min(p - s - 1, m) warm-up forwards and at most min(p - s, m) micro-batches in flight, GPipe m") {
  const int p = 8;
  const ModelConfig& model = custom_175b();
  for (int m : {3, 8, 12}) {
    for (PipelineSchedule schedule : {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe}) {
      for (int stage : {0, 2, 6, 7}) {
        CAPTURE(m);
        CAPTURE(stage);
        const bool gpipe = schedule == PipelineSchedule::GPipe;
        CAPTURE(gpipe);
        const TrainingConfig tr = training(1, 128, m, false);
        const Trace t = generate_stage_trace(model, tr, layout(1, p, false, schedule), stage);
        // Forwards before the first backward, micro-batches in flight, op order per micro-batch.
        int forwards_before_backward = 0, in_flight = 0, most_in_flight = 0;
        bool backward_seen = false;
        std::set<int> started;
        for (const auto& op : t.ops) {
          if (op.kind == OpKind::Forward && op.layer == 0) {
            if (!backward_seen) ++forwards_before_backward;
            most_in_flight = std::max(most_in_flight, ++in_flight);
            CHECK(started.insert(op.micro_step).second);
          }
          if (op.kind == OpKind::Backward && op.layer == 0) {
            backward_seen = true;
            --in_flight;
            CHECK(started.count(op.micro_step) == 1);
          }
        }
        const int expected_warmup = std::min(p - stage - 1, m);
        CHECK(forwards_before_backward == (gpipe ? m : std::min(expected_warmup + 1, m)));
        CHECK(most_in_flight == (gpipe ? m : std::min(p - stage, m)));
        CHECK(in_flight == 0);
        // The activation peak is that many micro-batches' activations: 12 blocks of b s h (34 + 5 a s / h).
        const double s = 128, h = 12288, a = 96, blocks = 12;
        const double per_micro_batch = blocks * s * h * (34 + 5 * a * s / h) + (stage == 0 ? s * h : 0) +
                                       (stage == p - 1 ? 4 * s * h + 4 * s * 50272 : 0);
        CHECK(static_cast<double>(t.peak_activation_bytes()) == most_in_flight * per_micro_batch);
        // Warm-up count as the schedule reports it.
        CHECK(warmup_forwards(p, stage, m) == expected_warmup);
      }
    }
  }
}

TEST_CASE("op counts of a stage: compute, collectives and transfers per micro-batch") {
  // Stage 3 of 16 of Custom-175B, TP 8, recompute: 6 blocks x (forward + 2 all-reduces, recompute
  // + 2, backward + 2) + 4 transfers per micro-batch, each of the 2 receives followed by the
  // all-gather of the split send (scatter_gather_tensors_in_pipeline).
  const int m = 4;
  const Trace t = generate_stage_trace(custom_175b(), training(1, 128, m, true), layout(8, 16), 3);
  CHECK(t.ops.size() == static_cast<std::size_t>(m * (6 * 9 + 4 + 2)));
  // With sequence parallelism: 6 x (1 + 4 + 1 + 4 + 1 + 6) + 4.
  const Trace sp = generate_stage_trace(custom_175b(), training(1, 128, m, true), layout(8, 16, true), 3);
  CHECK(sp.ops.size() == static_cast<std::size_t>(m * (6 * 17 + 4)));
  // Gradients: every micro-batch's backward hands over the stage's sharded parameters, as generate_trace does.
  u64 grads = 0;
  for (const auto& op : t.ops) grads += op.grad_bytes;
  CHECK(grads == static_cast<u64>(m) * t.total_params() * 2);
}

TEST_CASE("bad layouts are refused with the reason") {
  const ModelConfig& m = custom_175b();
  const TrainingConfig tr = training(1, 1000, 1, false);
  auto error_of = [&](const ParallelLayout& l, int stage = 0) -> std::string {
    try {
      generate_stage_trace(m, tr, l, stage);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_of(layout(5, 1)).find("must divide the heads (96)") != std::string::npos);
  CHECK(error_of(layout(1, 97)).find("exceeds custom-175b's 96 blocks") != std::string::npos);
  CHECK(error_of(layout(1, 2, true)).find("needs tensor parallelism above 1") != std::string::npos);
  CHECK(error_of(layout(16, 2, true)).find("sequence length (1000) divisible by tensor parallelism (16)") != std::string::npos);
  CHECK(error_of(layout(8, 2), 2).find("stage 2 is not one of the pipeline's stages 0..1") != std::string::npos);
  CHECK(error_of(layout(0, 2)).find("tensor parallelism must be in [1, ") != std::string::npos);
  CHECK(error_of(layout(8, 2)).empty());
}

TEST_CASE("layouts from JSON: defaults, and errors at the field's JSON path") {
  const ModelConfig& m = custom_175b();
  const TrainingConfig tr = training(1, 1024, 1, false);
  auto parse = [&](const std::string& text) {
    const Json doc = Json::parse(text);
    return layout_from_json(JsonNode(doc, "l.json", "$.layout"), m, tr);
  };
  auto error_of = [&](const std::string& text) -> std::string {
    try {
      parse(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(parse("{}") == ParallelLayout{});
  const ParallelLayout l = parse(R"({"tensor": 8, "pipeline": 16, "data": 256, "sequence_parallel": true, "pipeline_schedule": "gpipe"})");
  CHECK(l == ParallelLayout{8, 16, 256, true, PipelineSchedule::GPipe});
  CHECK(parse(layout_to_json(l).dump()) == l);
  CHECK(error_of(R"({"tensor": 7})").find("l.json: at $.layout.tensor: tensor parallelism 7 must divide") != std::string::npos);
  CHECK(error_of(R"({"pipeline": 200})").find("at $.layout.pipeline:") != std::string::npos);
  CHECK(error_of(R"({"data": 0})").find("at $.layout.data:") != std::string::npos);
  CHECK(error_of(R"({"sequence_parallel": true})").find("at $.layout.sequence_parallel:") != std::string::npos);
  CHECK(error_of(R"({"pipeline_schedule": "1f1"})").find("at $.layout.pipeline_schedule: unknown pipeline schedule \"1f1\" (did you mean \"1f1b\"?)") != std::string::npos);
  CHECK(error_of(R"({"tensr": 8})").find("at $.layout.tensr: unknown field") != std::string::npos);
}

TEST_CASE("stage traces round-trip through JSON version 3, and bad communication ops are refused at their path") {
  const Trace t = generate_stage_trace(custom_175b(), training(1, 256, 3, true), layout(8, 16, true), 15);
  const Json doc = trace_to_json(t);
  CHECK(doc["version"] == 3);
  const Trace back = trace_from_json(JsonNode(doc, "t.json"));
  CHECK(back.layout == t.layout);
  CHECK(back.stage == 15);
  CHECK(back.layers == t.layers);
  CHECK(back.kernel_lists == t.kernel_lists);
  CHECK(back.ops == t.ops);

  auto error_of = [](const Json& d) -> std::string {
    try {
      trace_from_json(JsonNode(d, "bad.json"));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  // The first op of the last stage is its activation's receive; a send to a next stage cannot be.
  REQUIRE(t.ops[0].kind == OpKind::RecvActivation);
  Json d = doc;
  d["ops"][0]["kind"] = "send-activation";
  CHECK(error_of(d).find("$.ops[0].kind: the last pipeline stage has no next stage") != std::string::npos);
  d = doc;
  d["ops"][0]["bytes"] = 0;
  CHECK(error_of(d).find("$.ops[0].bytes") != std::string::npos);
  d = doc;
  d["ops"][0]["kernels"] = t.ops[1].kernels;  // a forward's kernels
  CHECK(error_of(d).find("$.ops[0].kernels: a communication op launches no kernels") != std::string::npos);
  d = doc;
  d["ops"][0]["flops"] = 0;
  CHECK(error_of(d).find("$.ops[0].flops: unknown field") != std::string::npos);
  d = doc;
  d["stage"] = 16;
  CHECK(error_of(d).find("$.stage") != std::string::npos);
  d = doc;
  d["stage"] = 14;  // a middle stage has no head
  CHECK(error_of(d).find("$.layers") != std::string::npos);
  d = doc;
  d["layout"]["tensor"] = 7;
  CHECK(error_of(d).find("$.layout.tensor") != std::string::npos);
  // Tensor collectives need a tensor-parallel layout.
  const Trace one = generate_stage_trace(custom_175b(), training(1, 256, 1, false), layout(1, 2), 0);
  Json od = trace_to_json(one);
  std::size_t send = 0;
  while (one.ops[send].kind != OpKind::SendActivation) ++send;
  od["ops"][send]["kind"] = "tensor-all-reduce";
  CHECK(error_of(od).find("needs a layout with tensor > 1") != std::string::npos);
}

TEST_CASE("version 2 trace files still load as layout 1 x 1 x 1") {
  const Trace t = generate_trace(*find_catalog_model("gpt3-125m"), training(2, 128, 2, true));
  Json v2 = trace_to_json(t);
  v2["version"] = 2;
  v2.erase("layout");
  v2.erase("stage");
  const Trace back = trace_from_json(JsonNode(v2, "v2.json"));
  CHECK(back.ops == t.ops);
  CHECK(back.layout == ParallelLayout{});
  // A version 2 file knows no communication ops and no layout.
  Json bad = v2;
  bad["ops"][0]["kind"] = "tensor-all-reduce";
  CHECK_THROWS_AS(trace_from_json(JsonNode(bad, "v2.json")), InputError);
  bad = v2;
  bad["layout"] = Json::object();
  CHECK_THROWS_AS(trace_from_json(JsonNode(bad, "v2.json")), InputError);
}

namespace {

// Each stage's passes in its schedule's order, a pass taking `forward_s` or `backward_s` per
// chunk (the stage's whole forward split evenly over its chunks), communication instantaneous:
// a forward of virtual stage u waits for u - 1's forward of the micro-batch, a backward for
// u + 1's backward (the last virtual stage's for its own forward).  Returns when the last pass ends.
double schedule_makespan(int p, int m, int v, double forward_s, double backward_s) {
  std::vector<std::vector<PipelineStep>> steps;
  for (int s = 0; s < p; ++s) steps.push_back(pipeline_steps(PipelineSchedule::OneFOneB, p, s, m, v));
  std::map<std::tuple<bool, int, int>, double> done;  // (forward, virtual stage, micro-batch) -> end
  std::vector<double> clock(static_cast<std::size_t>(p), 0);
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      auto& i = next[static_cast<std::size_t>(s)];
      for (; i < steps[static_cast<std::size_t>(s)].size(); ++i, progress = true) {
        const PipelineStep& st = steps[static_cast<std::size_t>(s)][i];
        const int u = st.chunk * p + s, last = p * v - 1;
        std::optional<std::tuple<bool, int, int>> after;
        if (st.forward && u > 0) after = std::tuple{true, u - 1, st.micro_batch};
        if (!st.forward) after = u < last ? std::tuple{false, u + 1, st.micro_batch} : std::tuple{true, u, st.micro_batch};
        if (after && !done.count(*after)) break;
        double& c = clock[static_cast<std::size_t>(s)];
        c = std::max(c, after ? done[*after] : 0.0) + (st.forward ? forward_s : backward_s) / v;
        done[{st.forward, u, st.micro_batch}] = c;
      }
    }
  }
  for (int s = 0; s < p; ++s) REQUIRE(next[static_cast<std::size_t>(s)] == steps[static_cast<std::size_t>(s)].size());
  return *std::max_element(clock.begin(), clock.end());
}

}  // namespace

TEST_CASE("interleaved 1F1B: every (chunk, micro-batch) forward and backward once, and a bubble of (p - 1) / v") {
  // Narayanan et al. 2021 section 2.2.2: the iteration is m (tf + tb) + (p - 1) (tf + tb) / v, the
  // non-interleaved 1F1B's (p - 1) (tf + tb) bubble divided by v (m = p included: all warm-up).
  for (auto [p, m, v] : {std::tuple{4, 8, 2}, {4, 12, 3}, {2, 4, 2}, {8, 16, 4}, {4, 4, 2}, {3, 6, 2}, {4, 8, 1}}) {
    for (auto [tf, tb] : {std::pair{1.0, 2.0}, {1.0, 1.0}, {1.0, 3.0}}) {
      CAPTURE(p);
      CAPTURE(m);
      CAPTURE(v);
      CAPTURE(tb);
      CHECK(schedule_makespan(p, m, v, tf, tb) == doctest::Approx((m + (p - 1.0) / v) * (tf + tb)).epsilon(1e-12));
    }
    for (int s = 0; s < p; ++s) {
      std::set<std::tuple<bool, int, int>> seen;
      for (const PipelineStep& st : pipeline_steps(PipelineSchedule::OneFOneB, p, s, m, v)) {
        CHECK(seen.insert({st.forward, st.chunk, st.micro_batch}).second);
        if (!st.forward) CHECK(seen.count({true, st.chunk, st.micro_batch}) == 1);  // its forward ran before
      }
      CHECK(seen.size() == static_cast<std::size_t>(2 * m * v));
    }
  }
}

TEST_CASE("interleaved stages: chunk c of stage s holds virtual stage c p + s, and the last stage wraps to the first") {
  // GPT-3 125M's 12 blocks over 2 stages in chunks of 3: stage 0 holds blocks 0-2 and 6-8.
  const ModelConfig& model = *find_catalog_model("gpt3-125m");
  ParallelLayout l = layout(1, 2);
  l.layers_per_virtual_stage = 3;
  CHECK(l.virtual_stages(model.layers) == 2);
  const auto chunks = stage_chunk_blocks(model.layers, l, 0);
  REQUIRE(chunks.size() == 2);
  CHECK((chunks[0].first == 0 && chunks[0].count == 3 && chunks[1].first == 6 && chunks[1].count == 3));
  const int m = 4;
  const TrainingConfig tr = training(1, 128, m, false);
  const Trace first = generate_stage_trace(model, tr, l, 0), last = generate_stage_trace(model, tr, l, 1);
  REQUIRE(first.layers.size() == 7);  // embedding + 6 blocks
  CHECK(first.layers[4].name == "block_6");
  REQUIRE(last.layers.size() == 7);  // 6 blocks + head
  CHECK(last.layers[0].name == "block_3");
  auto count = [](const Trace& t, OpKind k) {
    return std::count_if(t.ops.begin(), t.ops.end(), [k](const TraceOp& op) { return op.kind == k; });
  };
  // Stage 0's chunk 1 receives (from stage 1's chunk 0) and sends; its chunk 0 only sends.
  CHECK(count(first, OpKind::RecvActivation) == m);
  CHECK(count(first, OpKind::SendActivation) == 2 * m);
  CHECK(count(last, OpKind::RecvActivation) == 2 * m);
  CHECK(count(last, OpKind::SendActivation) == m);  // its chunk 0 feeds stage 0's chunk 1
  CHECK(count(first, OpKind::SendGradient) == m);
  CHECK(count(last, OpKind::SendGradient) == 2 * m);
  // Every block runs once forward and once backward per micro-batch.
  CHECK(count(first, OpKind::Forward) == 7 * m);
  CHECK(count(first, OpKind::Backward) == 7 * m);
  // The trace reads back (its layers are the chunks', its sends wrap).
  const Json doc = trace_to_json(last);
  const Trace back = trace_from_json(JsonNode(doc, "t.json"));
  CHECK(back.layout == l);
  CHECK(back.ops.size() == last.ops.size());
}

TEST_CASE("interleaving is refused where Megatron-LM's schedule cannot run, at its JSON path") {
  const ModelConfig& m = custom_175b();  // 96 blocks
  auto error_of = [&](const std::string& text, int micro_batches = 8) -> std::string {
    try {
      const Json doc = Json::parse(text);
      layout_from_json(JsonNode(doc, "l.json", "$.layout"), m, training(1, 1024, micro_batches, false));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string at = "at $.layout.num_layers_per_virtual_pipeline_stage: ";
  CHECK(error_of(R"({"pipeline": 8, "num_layers_per_virtual_pipeline_stage": 3})").empty());
  CHECK(error_of(R"({"pipeline": 8, "num_layers_per_virtual_pipeline_stage": 3, "pipeline_schedule": "gpipe"})")
            .find(at + "the interleaved schedule is 1F1B's") != std::string::npos);
  CHECK(error_of(R"({"num_layers_per_virtual_pipeline_stage": 3})").find(at + "the interleaved schedule needs pipeline parallelism above 1") !=
        std::string::npos);
  CHECK(error_of(R"({"pipeline": 5, "num_layers_per_virtual_pipeline_stage": 3})", 10).find(at + "the interleaved schedule needs the blocks (96) divisible") !=
        std::string::npos);
  CHECK(error_of(R"({"pipeline": 8, "num_layers_per_virtual_pipeline_stage": 5})").find(at + "5 blocks per virtual stage must divide each stage's 12 blocks") !=
        std::string::npos);
  CHECK(error_of(R"({"pipeline": 8, "num_layers_per_virtual_pipeline_stage": 3})", 12).find(at + "the interleaved schedule runs micro-batches in groups") !=
        std::string::npos);
  CHECK(error_of(R"({"pipeline": 8, "num_layers_per_virtual_pipeline_stage": -1})").find(at) != std::string::npos);
}

TEST_CASE("scatter/gather of pipeline sends: 1 / tensor sent, the whole activation gathered after each receive") {
  const ModelConfig& model = custom_175b();
  const TrainingConfig tr = training(2, 1024, 2, false);
  const u64 activation = 2ull * 1024 * 12288 * 2;  // b s h x 2 B
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);
    ParallelLayout l = layout(8, 4, /*sp=*/variant == 2);
    l.scatter_gather_tensors_in_pipeline = variant != 1;
    const Trace t = generate_stage_trace(model, tr, l, 1);
    const bool split = variant == 0;
    CHECK(l.splits_pipeline_sends() == split);
    // Without sequence parallelism the activation is whole on each GPU; with it, / tensor already.
    const u64 sent = variant == 1 ? activation : activation / 8;
    CHECK(pipeline_transfer_bytes(model, tr, l) == sent);
    std::size_t gathers = 0;
    for (std::size_t i = 0; i < t.ops.size(); ++i) {
      const TraceOp& op = t.ops[i];
      if (op.kind == OpKind::SendActivation || op.kind == OpKind::SendGradient) CHECK(op.comm_bytes == sent);
      if (op.kind == OpKind::RecvActivation || op.kind == OpKind::RecvGradient) {
        REQUIRE(i + 1 < t.ops.size());
        const TraceOp& next = t.ops[i + 1];
        CHECK((next.kind == OpKind::TensorAllGather && next.comm_bytes == activation) == split);
      }
      if (op.kind == OpKind::TensorAllGather && op.comm_bytes == activation && !l.sequence_parallel) ++gathers;
    }
    CHECK(gathers == (split ? 2u * 2 : 0u));  // 2 receives per micro-batch on a middle stage
  }
}
