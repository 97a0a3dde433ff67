#pragma once
// How a training job spreads one model over GPUs: tensor x pipeline x data parallelism, as
// Megatron-LM lays it out (Narayanan et al. 2021, "Efficient large-scale language model training
// on GPU clusters using Megatron-LM", arXiv 2104.04473).  A scenario names it; a stage trace
// (workloads/stage_trace.hpp) is one GPU's iteration under it.
//   tensor             GPUs that split every layer (Megatron tensor parallelism, Shoeybi et al.
//                      2019, arXiv 1909.08053): heads, hidden and FFN widths divisible by it
//   pipeline           stages the blocks are split over (below)
//   data               replicas of the whole tensor x pipeline grid; the trace of one GPU does not
//                      depend on it (its gradients are reduced over the replicas by the training
//                      system), it is carried for the scenario
//   sequence_parallel  Korthikanti et al. 2022 (arXiv 2205.05198): norms and dropouts sharded by
//                      sequence, each all-reduce a reduce-scatter plus an all-gather; needs
//                      tensor > 1 and seq_len divisible by tensor, as Megatron-LM requires
//   pipeline_schedule  "1f1b" (PipeDream-Flush, Narayanan et al. 2021 section 2.2.1, Megatron-LM's
//                      default) or "gpipe" (Huang et al. 2019: all forwards, then all backwards)
//   num_layers_per_virtual_pipeline_stage
//                      Megatron-LM's interleaved 1F1B (Narayanan et al. 2021 section 2.2.2;
//                      forward_backward_pipelining_with_interleaving): each stage holds v model
//                      chunks of this many blocks, v = blocks / (pipeline x this); chunk c of
//                      stage s is virtual stage c x pipeline + s.  As Megatron-LM requires: the
//                      blocks divide evenly over the stages and each stage's over its chunks, the
//                      micro-batches (grad_accum) are a multiple of the stages, the schedule 1F1B.
//                      Absent or 0: not interleaved.
//   expert             expert parallelism (GShard, Lepikhin et al. 2021, arXiv 2006.16668; DeepSpeed-
//                      MoE; Megatron-Core's expert_model_parallel_size): a mixture's experts are
//                      spread over `expert` consecutive data-parallel ranks, experts / expert each;
//                      each block's dispatch and combine become all-to-alls over that group
//                      (workloads/tensor_collectives.hpp) and the experts' gradients are reduced
//                      over the ranks holding the same experts (data / expert of them, the
//                      expert-data-parallel group).  Must divide data and the experts; tensor 1.
//   scatter_gather_tensors_in_pipeline
//                      Megatron-LM's option of that name (default true; Narayanan et al. 2021
//                      section 4.1): with tensor > 1 and no sequence parallelism each GPU of a
//                      stage sends 1/tensor of the activation (or its gradient) and the receiving
//                      stage all-gathers it over its tensor group.  With sequence parallelism the
//                      activation is already split and no gather follows.
// Micro-batches per iteration: training.grad_accum (m); each of them is training.micro_batch
// sequences, so one iteration processes micro_batch x grad_accum x data sequences in all.
//
// Blocks over stages: L blocks, p stages; stage s holds floor(L / p) blocks, one more for the
// first L mod p stages (the last stage, which also runs the LM head, is never the one with more);
// every stage holds at least one block (p <= L).  The embedding is on the first stage, the final
// norm, LM head and loss on the last, as Megatron-LM places them (with a tied embedding the last
// stage keeps a copy of the matrix; workloads/layer_accounting.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/choice.hpp"
#include "common/json_input.hpp"
#include "workloads/model_config.hpp"
#include "workloads/tensor_sharding.hpp"
#include "workloads/training_config.hpp"

namespace luwu::workloads {

enum class PipelineSchedule { OneFOneB, GPipe };
std::string to_string(PipelineSchedule);
const Choices<PipelineSchedule>& pipeline_schedule_choices();

// The largest degrees luwusim accepts (far beyond any published run: Megatron-LM's 1T run is
// 8 x 64 x 6, Narayanan et al. 2021 table 1).
inline constexpr int kMaxTensorParallel = 1 << 12;
inline constexpr int kMaxPipelineParallel = 1 << 20;  // and at most the model's blocks
inline constexpr int kMaxDataParallel = 1 << 20;

struct ParallelLayout {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  bool sequence_parallel = false;
  PipelineSchedule pipeline_schedule = PipelineSchedule::OneFOneB;
  int layers_per_virtual_stage = 0;  // num_layers_per_virtual_pipeline_stage; 0: not interleaved
  bool scatter_gather_tensors_in_pipeline = true;
  int expert = 1;

  bool interleaved() const { return layers_per_virtual_stage > 0; }
  // Model chunks per stage (v): 1 unless interleaved.
  int virtual_stages(int blocks) const {
    return interleaved() ? blocks / (pipeline * layers_per_virtual_stage) : 1;
  }
  // Pipeline sends split over the tensor group and gathered on arrival (see above).
  bool splits_pipeline_sends() const { return scatter_gather_tensors_in_pipeline && tensor > 1 && !sequence_parallel; }
  // Tensor 1, pipeline 1 and expert 1: each GPU trains the whole model, the layout of generate_trace.
  bool whole_model_per_gpu() const { return tensor == 1 && pipeline == 1 && expert == 1; }
  long long gpus() const { return static_cast<long long>(tensor) * pipeline * data; }
  TensorSharding sharding() const { return {tensor, sequence_parallel, expert}; }

  bool operator==(const ParallelLayout&) const = default;
};

// What is wrong with a layout for this model and training, if anything: the field to blame
// ("tensor", "pipeline", "data", "sequence_parallel") and the message.
struct LayoutProblem {
  std::string field;
  std::string message;
};
std::optional<LayoutProblem> layout_problem(const ModelConfig& model, const TrainingConfig& training,
                                            const ParallelLayout& layout);
// std::invalid_argument with layout_problem's message.
void validate_layout(const ModelConfig& model, const TrainingConfig& training, const ParallelLayout& layout);

// The blocks of one stage: [first, first + count), in the model's numbering from 0.
struct StageBlocks {
  int first = 0;
  int count = 0;
};
StageBlocks stage_blocks(int blocks, int pipeline, int stage);
// The blocks of each model chunk of a stage, in the stage's order: one chunk (stage_blocks) unless
// the layout is interleaved, then v chunks of layers_per_virtual_stage blocks, chunk c holding
// virtual stage c x pipeline + stage.
std::vector<StageBlocks> stage_chunk_blocks(int blocks, const ParallelLayout& layout, int stage);

// {"tensor": 8, "pipeline": 16, "data": 1, "sequence_parallel": false, "pipeline_schedule": "1f1b",
//  "num_layers_per_virtual_pipeline_stage": 2, "scatter_gather_tensors_in_pipeline": true, "expert": 1},
// every field optional (defaults above: 1, 1, 1, false, "1f1b", 0, true, 1; "expert" written only above 1); unknown keys rejected; degrees
// are integers in [1, kMax...]; layout_problem's findings fail at the field they blame.
ParallelLayout layout_from_json(const luwu::JsonNode& node, const ModelConfig& model, const TrainingConfig& training);
// Every field: layout_from_json reads it back equal.
luwu::Json layout_to_json(const ParallelLayout& layout);

}  // namespace luwu::workloads
