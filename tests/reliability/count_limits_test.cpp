// Parameter, FLOP and byte counts of extreme but valid models are exact (checked against closed
// forms in 128-bit integers), and models whose counts would wrap uint64 are InputErrors.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "common/input_error.hpp"
#include "common/json_input.hpp"
#include "workloads/layer_accounting.hpp"
#include "workloads/model_config.hpp"
#include "workloads/trace.hpp"

namespace {

using u128 = unsigned __int128;
using luwu::workloads::ModelConfig;

ModelConfig model_of(const std::string& text) {
  luwu::Json doc = luwu::Json::parse(text);
  return luwu::workloads::model_from_json(luwu::JsonNode(doc, "limits.json"));
}

// A GPT-style model (GELU FFN 4h, biases, LayerNorm, learned positions, tied embeddings) by hand:
// L blocks of 12h^2 + 13h (attention 4h^2 + 4h, FFN 8h^2 + 5h, two LayerNorms 4h), token and
// position embeddings (V + S) h, final LayerNorm 2h.
u128 gpt_params(u128 L, u128 h, u128 V, u128 S) { return L * (12 * h * h + 13 * h) + (V + S) * h + 2 * h; }

std::uint64_t counted_params(const ModelConfig& m) {
  return luwu::workloads::embedding_params(m) + m.layers * luwu::workloads::transformer_block_params(m) +
         luwu::workloads::head_params(m);
}

std::string json_path_of_error(const std::string& text) {
  try {
    model_of(text);
  } catch (const luwu::InputError& e) {
    return e.json_path();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("a 100T-parameter model: parameters, bytes and FLOPs exact") {
  const ModelConfig m =
      model_of(R"({"layers": 1000, "hidden": 100000, "heads": 100, "vocab": 50000, "max_seq": 2048})");
  const u128 params = gpt_params(1000, 100000, 50000, 2048);
  CHECK(params > u128{100'000'000'000'000});
  CHECK(u128{counted_params(m)} == params);

  luwu::workloads::TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 2048;
  const auto trace = luwu::workloads::generate_trace(m, t);
  CHECK(u128{trace.total_params()} == params);
  CHECK(u128{trace.param_bytes()} == 2 * params);  // fp16
  // Per block, forward: 2 T (12 h^2) for the matrices + 4 b s^2 h for scores and their use; head
  // 2 T h V; backward twice forward.  T = b s tokens.
  const double T = 2048, s = 2048, h = 100000, V = 50000;
  const double forward = 1000 * (2 * T * 12 * h * h + 4 * s * s * h) + 2 * T * h * V;
  CHECK(trace.flops_per_iteration() == doctest::Approx(3 * forward).epsilon(1e-12));
}

TEST_CASE("at the 2^58-parameter cap counts are still exact, with 16 bytes of state per parameter") {
  // 2^20 blocks (the layer cap) of h = 100000: about 1.26e17 parameters, below 2^58 = 2.9e17.
  const ModelConfig m =
      model_of(R"({"layers": 1048576, "hidden": 100000, "heads": 100, "vocab": 50000, "max_seq": 2048})");
  const u128 params = gpt_params(1048576, 100000, 50000, 2048);
  CHECK(params < (u128{1} << 58));
  CHECK(u128{counted_params(m)} == params);
  CHECK(u128{counted_params(m) * 16} == 16 * params);
}

TEST_CASE("models whose counts would wrap uint64 are input errors") {
  // 4h^2 alone is 1.8e19 here, and 2^31 - 1 blocks of it are far past 2^64.
  CHECK(json_path_of_error(R"({"layers": 1000, "hidden": 2147483647, "heads": 1, "vocab": 2147483647,
                               "max_seq": 2147483647, "ffn_hidden": 2147483647})") == "$");
  // Just over the cap: 2^20 blocks of h = 200000 are 5e17 parameters.
  CHECK(json_path_of_error(R"({"layers": 1048576, "hidden": 200000, "heads": 100, "vocab": 50000,
                               "max_seq": 2048})") == "$");
  CHECK(json_path_of_error(R"({"layers": 1048577, "hidden": 8, "heads": 1, "vocab": 8, "max_seq": 8})") ==
        "$.layers");
}
