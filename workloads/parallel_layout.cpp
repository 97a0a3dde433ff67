#include "workloads/parallel_layout.hpp"

#include <stdexcept>

namespace luwu::workloads {

std::string to_string(PipelineSchedule s) { return s == PipelineSchedule::OneFOneB ? "1f1b" : "gpipe"; }

const Choices<PipelineSchedule>& pipeline_schedule_choices() {
  static const Choices<PipelineSchedule> choices = choices_by_name({PipelineSchedule::OneFOneB, PipelineSchedule::GPipe});
  return choices;
}

namespace {

std::optional<LayoutProblem> range_problem(const char* field, int value, int max) {
  if (value >= 1 && value <= max) return std::nullopt;
  return LayoutProblem{field, std::string(field) + " parallelism must be in [1, " + std::to_string(max) + "], got " +
                                  std::to_string(value)};
}

// "tensor 8 must divide heads (12)".
std::optional<LayoutProblem> divides(int tensor, long long n, const std::string& what) {
  if (n % tensor == 0) return std::nullopt;
  return LayoutProblem{"tensor", "tensor parallelism " + std::to_string(tensor) + " must divide " + what + " (" +
                                     std::to_string(n) + ")"};
}

}  // namespace

std::optional<LayoutProblem> layout_problem(const ModelConfig& m, const TrainingConfig& t, const ParallelLayout& l) {
  if (auto p = range_problem("tensor", l.tensor, kMaxTensorParallel)) return p;
  if (auto p = range_problem("pipeline", l.pipeline, kMaxPipelineParallel)) return p;
  if (auto p = range_problem("data", l.data, kMaxDataParallel)) return p;
  // Megatron-LM's split needs whole heads, whole kv groups and whole columns on every GPU.
  if (auto p = divides(l.tensor, m.heads, "the heads")) return p;
  if (auto p = divides(l.tensor, m.kv_heads, "the kv heads")) return p;
  if (auto p = divides(l.tensor, m.hidden, "the hidden width")) return p;
  if (auto p = divides(l.tensor, m.ffn_hidden, "the FFN width")) return p;
  if (auto p = divides(l.tensor, m.kv_width(), "the K and V width")) return p;
  if (auto p = range_problem("expert", l.expert, kMaxDataParallel)) return p;
  if (l.expert > 1) {
    const std::string ep = "expert parallelism " + std::to_string(l.expert);
    if (!m.moe()) return LayoutProblem{"expert", ep + " spreads a mixture's experts: " + m.name + " has none"};
    if (m.experts % l.expert != 0)
      return LayoutProblem{"expert", ep + " must divide the experts (" + std::to_string(m.experts) + ")"};
    if (l.data % l.expert != 0)
      return LayoutProblem{"expert", ep + " spreads the experts over data-parallel ranks: it must divide data (" +
                                         std::to_string(l.data) + ")"};
    if (l.tensor > 1)
      return LayoutProblem{"expert", ep + " with tensor parallelism is not modelled (Megatron-Core's expert tensor "
                                          "parallelism): use tensor 1"};
  }
  if (l.pipeline > m.layers)
    return LayoutProblem{"pipeline", "pipeline parallelism " + std::to_string(l.pipeline) + " exceeds " + m.name + "'s " +
                                         std::to_string(m.layers) + " blocks: every stage needs at least one"};
  if (l.sequence_parallel && l.tensor == 1)
    return LayoutProblem{"sequence_parallel", "sequence parallelism shards over the tensor-parallel group: it needs "
                                              "tensor parallelism above 1"};
  if (l.interleaved()) {
    const std::string key = "num_layers_per_virtual_pipeline_stage";
    const int k = l.layers_per_virtual_stage;
    if (l.pipeline_schedule != PipelineSchedule::OneFOneB)
      return LayoutProblem{key, "the interleaved schedule is 1F1B's (Megatron-LM): it needs pipeline_schedule \"1f1b\""};
    if (l.pipeline < 2) return LayoutProblem{key, "the interleaved schedule needs pipeline parallelism above 1"};
    if (m.layers % l.pipeline != 0)
      return LayoutProblem{key, "the interleaved schedule needs the blocks (" + std::to_string(m.layers) +
                                    ") divisible by pipeline parallelism (" + std::to_string(l.pipeline) + ")"};
    if ((m.layers / l.pipeline) % k != 0)
      return LayoutProblem{key, std::to_string(k) + " blocks per virtual stage must divide each stage's " +
                                    std::to_string(m.layers / l.pipeline) + " blocks"};
    if (t.grad_accum % l.pipeline != 0)
      return LayoutProblem{key, "the interleaved schedule runs micro-batches in groups of the pipeline's stages: grad_accum (" +
                                    std::to_string(t.grad_accum) + ") must be a multiple of pipeline parallelism (" +
                                    std::to_string(l.pipeline) + "), as Megatron-LM requires"};
  }
  if (l.sequence_parallel && t.seq_len % l.tensor != 0)
    return LayoutProblem{"sequence_parallel", "sequence parallelism needs the sequence length (" +
                                                  std::to_string(t.seq_len) + ") divisible by tensor parallelism (" +
                                                  std::to_string(l.tensor) + ")"};
  return std::nullopt;
}

void validate_layout(const ModelConfig& model, const TrainingConfig& training, const ParallelLayout& layout) {
  if (auto p = layout_problem(model, training, layout)) throw std::invalid_argument(p->message);
}

StageBlocks stage_blocks(int blocks, int pipeline, int stage) {
  if (pipeline < 1 || pipeline > blocks || stage < 0 || stage >= pipeline)
    throw std::invalid_argument("stage " + std::to_string(stage) + " of " + std::to_string(pipeline) + " over " +
                                std::to_string(blocks) + " blocks");
  const int base = blocks / pipeline, extra = blocks % pipeline;
  return {stage * base + std::min(stage, extra), base + (stage < extra ? 1 : 0)};
}

std::vector<StageBlocks> stage_chunk_blocks(int blocks, const ParallelLayout& layout, int stage) {
  if (!layout.interleaved()) return {stage_blocks(blocks, layout.pipeline, stage)};
  stage_blocks(blocks, layout.pipeline, stage);  // the same range checks
  const int k = layout.layers_per_virtual_stage, v = layout.virtual_stages(blocks);
  std::vector<StageBlocks> chunks;
  for (int c = 0; c < v; ++c) chunks.push_back({(c * layout.pipeline + stage) * k, k});
  return chunks;
}

ParallelLayout layout_from_json(const JsonNode& node, const ModelConfig& model, const TrainingConfig& training) {
  node.only_keys({"tensor", "pipeline", "data", "sequence_parallel", "pipeline_schedule",
                  "num_layers_per_virtual_pipeline_stage", "scatter_gather_tensors_in_pipeline", "expert"});
  ParallelLayout l;
  l.tensor = static_cast<int>(node.get_int("tensor", l.tensor, 1, kMaxTensorParallel));
  l.pipeline = static_cast<int>(node.get_int("pipeline", l.pipeline, 1, kMaxPipelineParallel));
  l.data = static_cast<int>(node.get_int("data", l.data, 1, kMaxDataParallel));
  l.sequence_parallel = node.get_bool("sequence_parallel", l.sequence_parallel);
  if (node.has("pipeline_schedule"))
    l.pipeline_schedule = node.at("pipeline_schedule").as_choice(pipeline_schedule_choices(), "pipeline schedule");
  l.layers_per_virtual_stage =
      static_cast<int>(node.get_int("num_layers_per_virtual_pipeline_stage", 0, 0, kMaxPipelineParallel));
  l.scatter_gather_tensors_in_pipeline =
      node.get_bool("scatter_gather_tensors_in_pipeline", l.scatter_gather_tensors_in_pipeline);
  l.expert = static_cast<int>(node.get_int("expert", l.expert, 1, kMaxDataParallel));
  // "data" left out is the caller's to derive (a scenario: from the GPUs); checked here as at least
  // the expert-parallel group, and by the caller once derived.
  if (!node.has("data")) l.data = l.expert;
  if (auto p = layout_problem(model, training, l)) {
    if (node.has(p->field)) node.at(p->field).fail(p->message);
    node.fail(p->message);
  }
  return l;
}

Json layout_to_json(const ParallelLayout& l) {
  Json j{{"tensor", l.tensor},
              {"pipeline", l.pipeline},
              {"data", l.data},
              {"sequence_parallel", l.sequence_parallel},
              {"pipeline_schedule", to_string(l.pipeline_schedule)},
              {"num_layers_per_virtual_pipeline_stage", l.layers_per_virtual_stage},
              {"scatter_gather_tensors_in_pipeline", l.scatter_gather_tensors_in_pipeline}};
  if (l.expert > 1) j["expert"] = l.expert;
  return j;
}

}  // namespace luwu::workloads
