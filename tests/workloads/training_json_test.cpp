// workloads/training_json.hpp: the one reader of the "training" object of scenarios and traces,
// its defaults, its bounds and where its errors point.
#include <doctest/doctest.h>

#include <string>

#include "common/input_error.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/model_config.hpp"
#include "workloads/trace.hpp"
#include "workloads/training_json.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

const std::string kFile = "training-test.json";

// One block of hidden 8: every bound below is reached long before its counts get large.
ModelConfig tiny_model(int max_seq) {
  Json j = {{"name", "tiny"}, {"layers", 1}, {"hidden", 8}, {"heads", 1}, {"vocab", 16}, {"max_seq", max_seq}};
  return model_from_json(JsonNode(j, "model.json"));
}

TrainingConfig read(const Json& j, const ModelConfig& model) {
  return training_from_json(JsonNode(j, kFile, "$.training"), model);
}

struct Failure {
  std::string path;
  std::string what;
};

Failure failure_of(const Json& j, const ModelConfig& model) {
  try {
    read(j, model);
  } catch (const InputError& e) {
    CHECK(e.file() == kFile);
    return {e.json_path(), e.what()};
  }
  return {"(accepted)", ""};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("only micro_batch is required, the rest default to one 2048-token fp16 micro-batch without recompute") {
  const TrainingConfig t = read({{"micro_batch", 4}}, *find_catalog_model("gpt3-125m"));
  CHECK(t.micro_batch == 4);
  CHECK(t.seq_len == 2048);
  CHECK(t.grad_accum == 1);
  CHECK(t.recompute == false);
  CHECK(t.memory_efficient_attention == false);
  CHECK(t.dtype == DType::Fp16);
  CHECK(failure_of(Json::object(), *find_catalog_model("gpt3-125m")).path == "$.training");
}

TEST_CASE("every field is read as written, and training_to_json writes what reads back equal") {
  const Json j = {{"micro_batch", 3},           {"seq_len", 512}, {"grad_accum", 5},
                  {"recompute", true},          {"dtype", "bf16"}, {"memory_efficient_attention", true},
                  {"attention_scores", "passes"}, {"attention_score_passes", 3}, {"attention_layout_copies", 5}};
  const TrainingConfig t = read(j, *find_catalog_model("gpt3-125m"));
  CHECK(t.micro_batch == 3);
  CHECK(t.seq_len == 512);
  CHECK(t.grad_accum == 5);
  CHECK(t.recompute);
  CHECK(t.memory_efficient_attention);
  CHECK(t.attention_score_passes == 3);
  CHECK(t.attention_layout_copies == 5);
  CHECK(t.dtype == DType::Bf16);
  CHECK(training_to_json(t) == j);
  CHECK(read(training_to_json(t), *find_catalog_model("gpt3-125m")) == t);
}

TEST_CASE("attention_scores names a framework's kernels over the scores, and then takes no pass count") {
  const ModelConfig& m = *find_catalog_model("opt-1.3b");
  TrainingConfig t = read({{"micro_batch", 1}, {"attention_scores", "hugging-face-opt"}}, m);
  CHECK(t.attention_scores == AttentionScores::HuggingFaceOpt);
  CHECK(read(training_to_json(t), m) == t);
  CHECK_FALSE(training_to_json(t).contains("attention_score_passes"));
  t = read({{"micro_batch", 1}, {"attention_scores", "masked-fill"}}, m);
  CHECK(t.attention_scores == AttentionScores::MaskedFill);
  CHECK(read(training_to_json(t), m) == t);
  CHECK(read({{"micro_batch", 1}}, m).attention_scores == AttentionScores::Passes);
  Failure f = failure_of({{"micro_batch", 1}, {"attention_scores", "hugging-face"}}, m);
  CHECK(f.path == "$.training.attention_scores");
  CHECK(contains(f.what, "\"hugging-face-opt\""));
  f = failure_of({{"micro_batch", 1}, {"attention_scores", "hugging-face-opt"}, {"attention_score_passes", 3}}, m);
  CHECK(f.path == "$.training.attention_score_passes");
  CHECK(contains(f.what, "names its kernels itself"));
}

TEST_CASE("the bounds: micro_batch and grad_accum up to 2^20, seq_len up to 2^24 and the model's max_seq") {
  REQUIRE(kMaxMicroBatch == 1048576);
  REQUIRE(kMaxGradAccum == 1048576);
  REQUIRE(kMaxSeqLen == 16777216);
  const ModelConfig m = tiny_model(1 << 24);
  CHECK(read({{"micro_batch", 1048576}, {"seq_len", 1}}, m).micro_batch == 1048576);
  CHECK(read({{"micro_batch", 1}, {"seq_len", 16777216}}, m).seq_len == 16777216);
  CHECK(read({{"micro_batch", 1}, {"seq_len", 1}, {"grad_accum", 1048576}}, m).grad_accum == 1048576);

  CHECK(failure_of({{"micro_batch", 1048577}, {"seq_len", 1}}, m).path == "$.training.micro_batch");
  CHECK(failure_of({{"micro_batch", 0}, {"seq_len", 1}}, m).path == "$.training.micro_batch");
  CHECK(failure_of({{"micro_batch", 1}, {"seq_len", 16777217}}, m).path == "$.training.seq_len");
  CHECK(failure_of({{"micro_batch", 1}, {"seq_len", 0}}, m).path == "$.training.seq_len");
  CHECK(failure_of({{"micro_batch", 1}, {"seq_len", 1}, {"grad_accum", 1048577}}, m).path == "$.training.grad_accum");
  CHECK(failure_of({{"micro_batch", 1}, {"seq_len", 1}, {"grad_accum", 0}}, m).path == "$.training.grad_accum");
  CHECK(failure_of({{"micro_batch", 1.5}}, m).path == "$.training.micro_batch");

  const ModelConfig short_context = tiny_model(64);
  CHECK(read({{"micro_batch", 1}, {"seq_len", 64}}, short_context).seq_len == 64);
  const Failure f = failure_of({{"micro_batch", 1}, {"seq_len", 65}}, short_context);
  CHECK(f.path == "$.training.seq_len");
  CHECK(contains(f.what, "sequence length 65 exceeds tiny's max_seq 64"));
  // Without seq_len the default 2048 must fit too: the object is at fault, and the message says why.
  const Failure by_default = failure_of({{"micro_batch", 1}}, short_context);
  CHECK(by_default.path == "$.training");
  CHECK(contains(by_default.what, "the default sequence length 2048 exceeds tiny's max_seq 64: set \"seq_len\""));
}

TEST_CASE("limits of several fields together fail at the training object") {
  // 5 B x heads x s^2 x b of attention scores: 5 x 2^48 x 2^20 bytes, beyond 2^62.
  const Failure f = failure_of({{"micro_batch", 1048576}, {"seq_len", 16777216}}, tiny_model(1 << 24));
  CHECK(f.path == "$.training");
  CHECK(contains(f.what, "activations beyond 2^62 bytes"));
}

TEST_CASE("unknown keys and dtypes suggest the nearest name") {
  const ModelConfig& m = *find_catalog_model("gpt3-125m");
  Failure f = failure_of({{"micro_batch", 1}, {"grad_acum", 2}}, m);
  CHECK(f.path == "$.training.grad_acum");
  CHECK(contains(f.what, "did you mean \"grad_accum\""));
  f = failure_of({{"micro_batch", 1}, {"dtype", "fp33"}}, m);
  CHECK(f.path == "$.training.dtype");
  CHECK(contains(f.what, "unknown dtype \"fp33\" (did you mean \"fp32\"?); expected \"fp16\", \"bf16\" or \"fp32\""));
  f = failure_of({{"micro_batch", 1}, {"recompute", "yes"}}, m);
  CHECK(f.path == "$.training.recompute");
}

TEST_CASE("generate_trace refuses what the reader would refuse, so every trace it writes reads back") {
  const ModelConfig m = tiny_model(1 << 24);
  TrainingConfig t;
  t.seq_len = 1;
  t.micro_batch = kMaxMicroBatch + 1;
  CHECK_THROWS_AS(generate_trace(m, t), std::invalid_argument);
  t.micro_batch = 1;
  t.grad_accum = kMaxGradAccum + 1;
  CHECK_THROWS_AS(generate_trace(m, t), std::invalid_argument);
  t.grad_accum = 1;
  t.seq_len = kMaxSeqLen + 1;
  CHECK_THROWS_AS(generate_trace(m, t), std::invalid_argument);
  // At the bounds: written and read back.
  t.seq_len = 1;
  t.micro_batch = kMaxMicroBatch;
  t.grad_accum = 4;
  const Trace trace = generate_trace(m, t);
  CHECK(trace_from_json(JsonNode(trace_to_json(trace), kFile)).training == t);
}
