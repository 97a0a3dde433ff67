#include "workloads/training_json.hpp"

#include <stdexcept>
#include <string>

#include "workloads/trace.hpp"

namespace luwu::workloads {

TrainingConfig training_from_json(const JsonNode& node, const ModelConfig& model) {
  node.only_keys({"micro_batch", "seq_len", "grad_accum", "recompute", "memory_efficient_attention",
                 "attention_scores", "attention_score_passes", "attention_layout_copies", "expert_capacity_factor",
                  "dtype"});
  TrainingConfig t;
  t.micro_batch = static_cast<int>(node.at("micro_batch").as_int(1, kMaxMicroBatch));
  t.seq_len = static_cast<int>(node.get_int("seq_len", t.seq_len, 1, kMaxSeqLen));
  if (t.seq_len > model.max_seq) {
    const std::string what = "sequence length " + std::to_string(t.seq_len) + " exceeds " + model.name + "'s max_seq " +
                             std::to_string(model.max_seq);
    if (node.has("seq_len")) node.at("seq_len").fail(what);
    node.fail("the default " + what + ": set \"seq_len\"");
  }
  t.grad_accum = static_cast<int>(node.get_int("grad_accum", t.grad_accum, 1, kMaxGradAccum));
  t.recompute = node.get_bool("recompute", t.recompute);
  t.memory_efficient_attention = node.get_bool("memory_efficient_attention", t.memory_efficient_attention);
  if (node.has("attention_scores"))
    t.attention_scores = node.at("attention_scores").as_choice(attention_scores_choices(), "attention score kernels");
  if (node.has("attention_score_passes") && t.attention_scores != AttentionScores::Passes)
    node.at("attention_score_passes")
        .fail("attention_score_passes counts the passes of attention_scores \"passes\" only; attention_scores \"" +
              to_string(t.attention_scores) + "\" names its kernels itself");
  t.attention_score_passes = static_cast<int>(
      node.get_int("attention_score_passes", t.attention_score_passes, 0, kMaxAttentionScorePasses));
  t.attention_layout_copies = static_cast<int>(
      node.get_int("attention_layout_copies", t.attention_layout_copies, 0, kMaxAttentionLayoutCopies));
  if (node.has("dtype")) t.dtype = node.at("dtype").as_choice(dtype_choices(), "dtype");
  if (node.has("expert_capacity_factor")) {
    if (!model.moe())
      node.at("expert_capacity_factor").fail(model.name + " is not a mixture of experts: expert_capacity_factor does not apply");
    const JsonNode factor = node.at("expert_capacity_factor");
    t.expert_capacity_factor = factor.as_number();
    if (!(t.expert_capacity_factor >= 1.0 && t.expert_capacity_factor <= kMaxExpertCapacityFactor))
      factor.fail("expected a factor in [1, " + std::to_string(static_cast<int>(kMaxExpertCapacityFactor)) + "], found " +
                  factor.raw().dump());
  }
  try {
    validate_training(model, t);
  } catch (const std::invalid_argument& e) {
    node.fail(e.what());
  }
  return t;
}

Json training_to_json(const TrainingConfig& t) {
  Json j{{"micro_batch", t.micro_batch},
              {"seq_len", t.seq_len},
              {"grad_accum", t.grad_accum},
              {"recompute", t.recompute},
              {"dtype", to_string(t.dtype)},
              {"memory_efficient_attention", t.memory_efficient_attention},
              {"attention_scores", to_string(t.attention_scores)},
              {"attention_layout_copies", t.attention_layout_copies}};
  if (t.attention_scores == AttentionScores::Passes) j["attention_score_passes"] = t.attention_score_passes;
  if (t.expert_capacity_factor != 1.0) j["expert_capacity_factor"] = t.expert_capacity_factor;  // MoE only
  return j;
}

}  // namespace luwu::workloads
