// One transformer block, forward and backward, as luwusim times its kernels on a measured GPU's
// profile against the block bench/gpu_block.py timed there (validation/measured/*/block.json):
// eager PyTorch, bf16, a fused QKV projection, five T x h layout copies (q scaled, q, k and v
// made contiguous per head, the context reshaped back) and, unfused, a masked fill and a softmax
// over the scores.  The measurement and the profile's rates are independent: the rates come
// from single-kernel runs (rates.json, gemm.csv) and the masked fill's from its own kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "common/json_input.hpp"
#include "models/profile.hpp"
#include "models/gpu.hpp"
#include "sim/engine/op_timing.hpp"
#include "workloads/kernels.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

struct BlockTimes {
  double forward_s = 0, backward_s = 0;
};

BlockTimes predict(const Json& c, const models::GpuSpec& gpu) {
  // A case is named for its catalog model ("opt-1.3b mb8 s2048 unfused"); the bench's block has one
  // fused QKV projection.
  const std::string name = c.at("name").get<std::string>();
  const ModelConfig* catalog = find_catalog_model(name.substr(0, name.find(' ')));
  REQUIRE(catalog != nullptr);
  ModelConfig m = *catalog;
  REQUIRE(m.hidden == c.at("hidden").get<int>());
  REQUIRE(m.heads == c.at("heads").get<int>());
  m.separate_qkv = false;
  TrainingConfig t;
  t.micro_batch = c.at("micro_batch").get<int>();
  t.seq_len = c.at("seq").get<int>();
  t.dtype = DType::Bf16;
  t.memory_efficient_attention = c.at("fused").get<bool>();
  t.attention_scores = AttentionScores::MaskedFill;
  t.attention_layout_copies = 5;
  BlockTimes out;
  for (const auto& k : layer_kernels(m, t, LayerKind::Transformer, OpKind::Forward))
    out.forward_s += sim::kernel_run(k, gpu, t.dtype).seconds;
  for (const auto& k : layer_kernels(m, t, LayerKind::Transformer, OpKind::Backward))
    out.backward_s += sim::kernel_run(k, gpu, t.dtype).seconds;
  return out;
}

}  // namespace

TEST_CASE("one block on the H100 and H200 within 12% of bench/gpu_block.py's measurement, materialized scores included") {
  for (const auto& [dir, profile] : {std::pair{"h100-sxm-2026-11-27", "h100-80gb-sxm"}, std::pair{"h200-2026-11-27", "h200-141gb-sxm"}}) {
    const models::GpuSpec gpu = models::gpu_from_profile(models::find_profile(profile));
    const Json doc = load_json_file(std::string(LUWUSIM_SOURCE_DIR) + "/validation/measured/" + dir + "/block.json");
    for (const auto& c : doc.at("cases")) {
      const BlockTimes p = predict(c, gpu);
      const double fwd = p.forward_s / c.at("forward_s").get<double>() - 1,
                   bwd = p.backward_s / c.at("backward_s").get<double>() - 1;
      const std::string where = std::string(dir) + " " + c.at("name").get<std::string>();
      CAPTURE(where);
      CAPTURE(fwd);
      CAPTURE(bwd);
      // Before the fill's clone and broadcast kernel were counted (2 streaming passes, no layout
      // copies) OPT-1.3B's unfused block came out 32% / 15% short on the H100, 36% / 12% on the H200.
      CHECK(std::abs(fwd) < 0.12);
      CHECK(std::abs(bwd) < 0.12);
    }
  }
}
