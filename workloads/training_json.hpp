#pragma once
// The "training" object, as scenarios (sim/experiment/scenario.hpp) and trace files (workloads/trace.hpp)
// write it, read by one function with one set of bounds:
//   {"micro_batch": 16,                    required; an integer in [1, kMaxMicroBatch = 2^20]
//    "seq_len": 2048,                       default 2048; an integer in [1, kMaxSeqLen = 2^24],
//                                           at most the model's max_seq
//    "grad_accum": 1,                       default 1; an integer in [1, kMaxGradAccum = 2^20]
//    "recompute": true,                     default false
//    "memory_efficient_attention": false,   default false
//    "attention_scores": "passes",          default "passes"; "passes", "hugging-face-opt" or
//                                           "masked-fill" (training_config.hpp, AttentionScores)
//    "attention_score_passes": 2,           default 2; an integer in [0, 16]; with "passes" only
//    "attention_layout_copies": 0,          default 0; an integer in [0, 16] (training_config.hpp)
//    "dtype": "fp16"}                       default "fp16"; "fp16", "bf16" or "fp32"
// Unknown keys are rejected.  Then validate_training (workloads/trace.hpp) applies what luwusim
// can count for this model: activation bytes below 2^62 and at most kMaxTraceOps trace ops.  Errors are
// InputErrors at the field's JSON path (a seq_len beyond max_seq at "seq_len"), or at the object
// for validate_training's limits, which involve several fields.
#include "common/json_input.hpp"
#include "workloads/model_config.hpp"
#include "workloads/training_config.hpp"

namespace luwu::workloads {

TrainingConfig training_from_json(const luwu::JsonNode& node, const ModelConfig& model);

// Every field, defaults included (expert_capacity_factor only when not 1, for mixtures of
// experts): training_from_json reads it back equal.
luwu::Json training_to_json(const TrainingConfig& training);

}  // namespace luwu::workloads
